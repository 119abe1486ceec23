// CenterCropPad(X, shape) -> Y: ONNX's CenterCropPad (opset 18). For each axis in arg axes (default:
// all; negative counts from the end) with target size shape[k] (int32/int64, one per axis): a
// smaller target crops the centre (start (dim - target) / 2, rounded down), a larger one pads with
// zeros around it (the input starts at (target - dim) / 2). Any dtype but string. CPU only; no gradient.
#pragma once

#include <vector>

#include "core/operator.h"

namespace hetnet {

class CenterCropPadOp final : public Operator<CPUContext> {
 public:
  CenterCropPadOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axes_(GetRepeatedArgument<int64_t>("axes")) {}
  void RunOnDevice() override;

 private:
  std::vector<int64_t> axes_;
};

}  // namespace hetnet
