// ONNX's narrow element types: the 8-bit floats (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0), the 4-bit
// float E2M1 and the 4- and 2-bit integers. A hetnet tensor holds one element per byte, in the bit
// layout of ml_dtypes (what onnx.numpy_helper returns), so numpy arrays cross as they are: a 4- or
// 2-bit value sits in the byte's low bits, the rest zero.
//
// They are storage types: no arithmetic kernel takes them. Cast, QuantizeLinear and DequantizeLinear
// convert them (on CPU), and ops that move bytes without reading them (Copy, Reshape, Identity, ...)
// carry them. So they stay out of DataType's list in core/types.h and out of DispatchDataType, which
// would otherwise need a C++ arithmetic type for each. Their values are ONNX's TensorProto numbers plus
// 100; caffe2.proto has no such data_type, so they are not written to Caffe2 TensorProtos.
#pragma once

#include <cstdint>
#include <string>

#include "core/types.h"

namespace hetnet {

constexpr DataType kFloat8E4M3FN = static_cast<DataType>(117);
constexpr DataType kFloat8E4M3FNUZ = static_cast<DataType>(118);
constexpr DataType kFloat8E5M2 = static_cast<DataType>(119);
constexpr DataType kFloat8E5M2FNUZ = static_cast<DataType>(120);
constexpr DataType kUInt4 = static_cast<DataType>(121);
constexpr DataType kInt4 = static_cast<DataType>(122);
constexpr DataType kFloat4E2M1 = static_cast<DataType>(123);
constexpr DataType kFloat8E8M0 = static_cast<DataType>(124);
constexpr DataType kUInt2 = static_cast<DataType>(125);
constexpr DataType kInt2 = static_cast<DataType>(126);

constexpr int kNarrowTypeOffset = 100;  // DataType value = ONNX TensorProto.DataType + this

inline bool IsNarrowDataType(DataType t) {
  const int v = static_cast<int>(t);
  return v >= static_cast<int>(kFloat8E4M3FN) && v <= static_cast<int>(kInt2);
}
inline bool IsNarrowInteger(DataType t) {
  return t == kUInt4 || t == kInt4 || t == kUInt2 || t == kInt2;
}
inline bool IsNarrowFloat(DataType t) { return IsNarrowDataType(t) && !IsNarrowInteger(t); }

// ml_dtypes' name ("float8_e4m3fn", "int4", ...); nullptr for other types. And back: the narrow
// type of that name, Undefined for any other name.
const char* NarrowDataTypeName(DataType t);
DataType NarrowDataTypeNamed(const std::string& name);

// The exact value of one element (NaN where the type has one; 4/2-bit integers sign-extended).
float NarrowToFloat(DataType t, uint8_t bits);

// How E8M0 (a power of two) rounds a value between two powers: ONNX Cast's round_mode.
enum class E8M0Rounding { kUp, kDown, kNearest };

// One element of narrow type t holding v, as ml_dtypes' astype and ONNX's Cast make it:
//  - floats round to nearest even; beyond the largest finite value (infinities included) they give
//    +-max when `saturate` (float4 E2M1 always saturates), else Inf (E5M2) or NaN; NaN stays NaN.
//  - E8M0 follows onnx.numpy_helper.to_float8e8m0 (the exponent of v as float32, rounded by `rounding`).
//  - integers truncate toward zero and keep the low bits (wrap), as numpy's astype does.
uint8_t NarrowFromDouble(DataType t, double v, bool saturate, E8M0Rounding rounding = E8M0Rounding::kUp);
uint8_t NarrowFromInteger(DataType t, int64_t v);  // integers and floats alike: the value v (wrapped for integers)

// The range of a narrow integer type (QuantizeLinear clamps to it).
void NarrowIntegerRange(DataType t, double* lo, double* hi);

}  // namespace hetnet
