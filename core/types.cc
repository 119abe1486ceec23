#include "core/types.h"

#include "core/narrow_types.h"

namespace hetnet {

size_t ItemSize(DataType t) {
  switch (t) {
    case DataType::Float: case DataType::Int32: case DataType::UInt32: return 4;
    case DataType::Double: case DataType::Int64: case DataType::UInt64: return 8;
    case DataType::Float16: case DataType::BFloat16: case DataType::Int16: case DataType::UInt16: return 2;
    case DataType::Int8: case DataType::UInt8: case DataType::Byte: case DataType::Bool: return 1;
    case DataType::String: return sizeof(std::string);
    default: return IsNarrowDataType(t) ? 1 : 0;  // one element per byte
  }
}

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::Float: return "float32";
    case DataType::Double: return "float64";
    case DataType::Float16: return "float16";
    case DataType::Int8: return "int8";
    case DataType::UInt8: return "uint8";
    case DataType::Byte: return "byte";
    case DataType::Int16: return "int16";
    case DataType::UInt16: return "uint16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::UInt32: return "uint32";
    case DataType::UInt64: return "uint64";
    case DataType::BFloat16: return "bfloat16";
    case DataType::Bool: return "bool";
    case DataType::String: return "string";
    case DataType::Undefined: return "undefined";
  }
  const char* narrow = NarrowDataTypeName(t);
  return narrow ? narrow : "unknown";
}

bool IsKnownDataType(int v) { return (v >= 1 && v <= 13 && v != 11) || (v >= 101 && v <= 103); }

}  // namespace hetnet
