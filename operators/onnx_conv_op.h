// OnnxConv(X, W[, B]) -> Y: ONNX's Conv over any number of spatial dims (X [N, C, D1..Dk], W
// [M, C / group, K1..Kk], B [M]), for the forms our 2-D NCHW Conv lacks (3-D and up). Args
// kernel_shape (default W's), strides, dilations, pads, auto_pad, group, as ONNX; window geometry as
// OnnxPool's (ComputeWindowDim). float32 or float64, accumulated in float64 by plain loops. CPU only;
// no gradient.
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class OnnxConvOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
