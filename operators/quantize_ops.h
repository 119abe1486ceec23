// ONNX's linear quantization (CPU only, no gradients):
//   QuantizeLinear(X, scale[, zero_point]) -> Y = saturate(rint(X / scale) + zero_point), ties to even,
//     clamped to Y's range. Y's dtype: zero_point's, else arg dtype (TensorProto value), else uint8;
//     int8, uint8, int16, uint16 or int32, or a narrow type (core/narrow_types.h): int4/uint4/int2/uint2
//     as the integers; float8 Y = X / scale converted (arg saturate, default 1; zero_point unused) and
//     float4 Y = X / scale + zero_point converted, as ONNX's reference. X float16/32/64 (X / scale in float32 for float16/32 X, as
//     ONNX's reference, in float64 for float64).
//   DequantizeLinear(X, scale[, zero_point]) -> Y = (X - zero_point) * scale; X int8/uint8/int16/uint16/
//     int32 or narrow (not E8M0); Y has scale's dtype (float16/32/64) unless arg dtype says otherwise.
//   scale / zero_point: one value (per tensor), 1-D of X.dim(axis) values (per axis, arg axis default
//     1), or with arg block_size > 0 X's rank with ceil(X.dim(axis) / block_size) along axis and X's
//     dims elsewhere (blocked). zero_point has scale's shape.
//   DynamicQuantizeLinear(X) -> Y (uint8), scale, zero_point: scale = (max(0, max X) - min(0, min X)) /
//     255 (float32), zero_point = saturate(rint(-min(0, min X) / scale)), Y quantized with them.
#pragma once

#include "core/operator.h"

namespace hetnet {

class QuantizeLinearOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class DequantizeLinearOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class DynamicQuantizeLinearOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;

 private:
  void EnforceFloatInput(const Tensor& X, int i) const;
};

}  // namespace hetnet
