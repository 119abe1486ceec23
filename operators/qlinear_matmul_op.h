// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point) -> y:
// ONNX's QLinearMatMul (opsets 10-21). a [..., M, K] and b [..., K, N] int8/uint8 (batch dims
// broadcast numpy-style, rank >= 2); the products (a - a_zp)(b - b_zp) summed in int64, scaled by
// a_scale * b_scale / y_scale (computed in the scales' dtype, float32 or float16, as ONNX's
// reference), plus y_zero_point, rounded half to even and saturated to y_zero_point's dtype
// (int8/uint8). Scales and zero points per tensor (one element each). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class QLinearMatMulOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
