// OnnxPad(X, pads[, constant_value[, axes]]) -> Y: ONNX's Pad (opset 18) with its parameters as
// run-time tensors, any rank and dtype (but string). pads (int32/int64) holds [begins..., ends...]
// for every dim of X, or for the dims listed in axes (negative from the end); negative pads crop.
// Arg mode: constant (constant_value, one element, default 0, converted to X's dtype), reflect
// (numpy's: mirrored without repeating the edge), edge (the edge repeated), wrap (periodic). reflect,
// edge and wrap need a non-empty dim where they pad. CPU only; no gradient.
#pragma once

#include <string>

#include "core/operator.h"

namespace hetnet {

class OnnxPadOp final : public Operator<CPUContext> {
 public:
  OnnxPadOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string mode_;
};

}  // namespace hetnet
