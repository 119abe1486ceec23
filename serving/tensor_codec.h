// Protocol tensors <-> hetnet tensors: datatype names (serving-facts §1.3), checked byte sizes,
// and the BYTES wire form (4-byte little-endian length + bytes per element). Shared by the server
// core and both front ends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "core/types.h"

namespace hetnet::serving {

// "FP32" -> DataType::Float ...; throws kInvalidArgument naming `what` for unknown or unsupported names.
DataType DataTypeFromProtocol(std::string_view name, const std::string& what);
// DataType::Float -> "FP32"; String -> "BYTES".
const char* ProtocolDataType(DataType t);
// Config enum (inference::DataType value, e.g. TYPE_FP32 = 11) <-> protocol name ("FP32").
std::string ProtocolNameOfConfigType(int config_type);
int ConfigTypeOfProtocolName(std::string_view name);  // 0 (TYPE_INVALID) when unknown
// Bytes per element for fixed-size types; 0 for BYTES.
size_t ProtocolElementSize(std::string_view name);

// Product of dims with overflow, negative and limit checks; errors name `what`.
int64_t CheckedElementCount(const std::vector<int64_t>& shape, int64_t max_elements, const std::string& what);

// Decodes the BYTES wire form of `count` elements into `out` (a String tensor already shaped; null:
// only check the lengths).
// Throws kInvalidArgument when lengths run past the end or bytes are left over.
void DecodeBytesElements(const char* data, size_t size, int64_t count, std::string* out, const std::string& what);
// Encodes a String tensor in the wire form.
std::string EncodeBytesTensor(const Tensor& t);
// The wire bytes of an output tensor: its raw host memory for fixed-size types, EncodeBytesTensor
// for BYTES. `scratch` holds the encoded form when one is needed.
std::string_view OutputBytes(const Tensor& t, std::string* scratch);

}  // namespace hetnet::serving
