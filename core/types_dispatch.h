#pragma once
#include "core/error.h"

namespace hetnet {

template <typename F>
decltype(auto) DispatchDataType(DataType t, F&& f) {
  switch (t) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    case DataType::Float16: return f(Half{});
    case DataType::Int8: return f(int8_t{});
    case DataType::Byte:
    case DataType::UInt8: return f(uint8_t{});
    case DataType::Int16: return f(int16_t{});
    case DataType::UInt16: return f(uint16_t{});
    case DataType::Int32: return f(int32_t{});
    case DataType::Int64: return f(int64_t{});
    case DataType::UInt32: return f(uint32_t{});
    case DataType::UInt64: return f(uint64_t{});
    case DataType::BFloat16: return f(BFloat16{});
    case DataType::Bool: return f(bool{});
    case DataType::String: return f(std::string{});
    default: HN_THROW(kInvalidArgument, "unsupported data type ", static_cast<int>(t));
  }
}

}  // namespace hetnet
