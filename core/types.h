// Element types of tensors. Values equal caffe2.TensorProto.DataType so they cross the wire as is.
// UInt32, UInt64 and BFloat16 are hetnet's own (Caffe2 has no such types; its enum ends at 15,
// ZERO_COLLISION_HASH 14 and REBATCHING_BUFFER 15 in the later PyTorch copy): they take 101..103,
// far from Caffe2's numbers and from ONNX's (which differ), declared in proto/caffe2.proto too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/bfloat16.h"
#include "core/half.h"

namespace hetnet {

enum class DataType : int {
  Undefined = 0,
  Float = 1,
  Int32 = 2,
  Byte = 3,  // Caffe2's BYTE: stored as uint8
  String = 4,
  Bool = 5,
  UInt8 = 6,
  Int8 = 7,
  UInt16 = 8,
  Int16 = 9,
  Int64 = 10,
  Float16 = 12,
  Double = 13,
  UInt32 = 101,    // hetnet extension
  UInt64 = 102,    // hetnet extension
  BFloat16 = 103,  // hetnet extension
};

size_t ItemSize(DataType t);           // bytes per element (sizeof(std::string) for String)
const char* DataTypeName(DataType t);  // "float32", "int64", ...
bool IsKnownDataType(int value);       // a value a TensorProto may carry

// Every fixed-size element type with its DataType, once: M(T, DataTypeName) for each (X-macro), so
// lists of template instantiations on CPU and CUDA cannot drift apart.
#define HN_FOR_EACH_POD_TYPE(M) \
  M(float, Float)               \
  M(double, Double)             \
  M(Half, Float16)              \
  M(int8_t, Int8)               \
  M(uint8_t, UInt8)             \
  M(int16_t, Int16)             \
  M(uint16_t, UInt16)           \
  M(int32_t, Int32)             \
  M(int64_t, Int64)             \
  M(uint32_t, UInt32)           \
  M(uint64_t, UInt64)           \
  M(BFloat16, BFloat16)         \
  M(bool, Bool)

template <typename T> struct DataTypeOf;
#define HN_DATATYPE_OF(T, V) \
  template <> struct DataTypeOf<T> { static constexpr DataType value = DataType::V; };
HN_FOR_EACH_POD_TYPE(HN_DATATYPE_OF)
HN_DATATYPE_OF(std::string, String)
#undef HN_DATATYPE_OF

// Calls f(T{}) with the C++ type for a runtime DataType (Byte maps to uint8_t).
template <typename F>
decltype(auto) DispatchDataType(DataType t, F&& f);

}  // namespace hetnet

#include "core/types_dispatch.h"
