// BitCast(X) -> Y: ONNX's BitCast (opset 26): Y holds X's bytes reinterpreted as dtype arg `to` (a
// hetnet DataType of the same element size; string refused), same shape. CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class BitCastOp final : public Operator<CPUContext> {
 public:
  BitCastOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  DataType to_;
};

}  // namespace hetnet
