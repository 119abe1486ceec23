// Dtype dispatch for operators that take the integer or the real-and-integer dtypes (bitwise ops,
// BitShift, TopK, the ONNX arithmetic ops): f(T{}) for the dtype, else a kInvalidArgument that names
// the operator (its def), input `i` and what it takes. Host and CUDA code include it (operators/*.cu).
#pragma once

#include <cstdint>

#include "core/operator.h"

namespace hetnet {

// int8/16/32/64 and uint8/16/32/64.
template <typename F>
decltype(auto) DispatchIntegerType(const caffe2::OperatorDef& def, DataType t, int i, F&& f) {
  switch (t) {
    case DataType::Int8: return f(int8_t{});
    case DataType::Int16: return f(int16_t{});
    case DataType::Int32: return f(int32_t{});
    case DataType::Int64: return f(int64_t{});
    case DataType::Byte:
    case DataType::UInt8: return f(uint8_t{});
    case DataType::UInt16: return f(uint16_t{});
    case DataType::UInt32: return f(uint32_t{});
    case DataType::UInt64: return f(uint64_t{});
    default:
      HN_THROW(kInvalidArgument, def.type(), ": input ", i, " ('", def.input(i), "') is ", DataTypeName(t),
               "; int8/16/32/64 or uint8/16/32/64 is required");
  }
}

// float32/64 and the integer dtypes (float16 and bfloat16 excluded: no arithmetic on them).
template <typename F>
decltype(auto) DispatchRealOrIntegerType(const caffe2::OperatorDef& def, DataType t, int i, F&& f) {
  switch (t) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    case DataType::Int8:
    case DataType::Int16:
    case DataType::Int32:
    case DataType::Int64:
    case DataType::Byte:
    case DataType::UInt8:
    case DataType::UInt16:
    case DataType::UInt32:
    case DataType::UInt64: return DispatchIntegerType(def, t, i, static_cast<F&&>(f));
    default:
      HN_THROW(kInvalidArgument, def.type(), ": input ", i, " ('", def.input(i), "') is ", DataTypeName(t),
               "; a numeric dtype (float32/64, int8/16/32/64, uint8/16/32/64) is required");
  }
}

}  // namespace hetnet
