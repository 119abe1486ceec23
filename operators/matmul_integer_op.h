// MatMulInteger(A, B[, a_zero_point][, b_zero_point]) -> Y: ONNX's MatMulInteger-10. A [..., M, K] and B [..., K, N]
// uint8 or int8 (each its own), numpy matmul semantics (a 1-D A is [1, K], a 1-D B is [K, 1], batch dims broadcast,
// size-1 dims stretching); Y int32 = sum_k (A - a_zp)(B - b_zp), accumulated in int64 and wrapped to int32 as int32
// arithmetic would. Zero points (the dtype of their operand; default 0): one element (per tensor); a_zero_point [M]
// or A's shape with its last dim 1 (per row); b_zero_point [N] or B's shape with its second-to-last dim 1 (per
// column). The optional inputs are found by position args a_zero_point_input / b_zero_point_input (-1: absent;
// default: inputs 2 and 3 where given). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class MatMulIntegerOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
