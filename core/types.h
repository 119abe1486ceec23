// Element types of tensors. Values equal caffe2.TensorProto.DataType so they cross the wire as is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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
};

size_t ItemSize(DataType t);           // bytes per element (sizeof(std::string) for String)
const char* DataTypeName(DataType t);  // "float32", "int64", ...
bool IsKnownDataType(int value);       // a value a TensorProto may carry

template <typename T> struct DataTypeOf;
#define HN_DATATYPE_OF(T, V) \
  template <> struct DataTypeOf<T> { static constexpr DataType value = DataType::V; };
HN_DATATYPE_OF(float, Float)
HN_DATATYPE_OF(double, Double)
HN_DATATYPE_OF(Half, Float16)
HN_DATATYPE_OF(int8_t, Int8)
HN_DATATYPE_OF(uint8_t, UInt8)
HN_DATATYPE_OF(int16_t, Int16)
HN_DATATYPE_OF(uint16_t, UInt16)
HN_DATATYPE_OF(int32_t, Int32)
HN_DATATYPE_OF(int64_t, Int64)
HN_DATATYPE_OF(bool, Bool)
HN_DATATYPE_OF(std::string, String)
#undef HN_DATATYPE_OF

// Calls f(T{}) with the C++ type for a runtime DataType (Byte maps to uint8_t).
template <typename F>
decltype(auto) DispatchDataType(DataType t, F&& f);

}  // namespace hetnet

#include "core/types_dispatch.h"
