#include "serving/tensor_codec.h"

#include <cstring>
#include <limits>

#include "core/error.h"

namespace hetnet::serving {
namespace {

struct TypeRow {
  const char* protocol;
  int config_type;  // inference::DataType
  DataType dtype;   // Undefined = known to the protocol, not to the runtime
  size_t size;
};

// serving-facts §1.3. BYTES is Caffe2's STRING tensor.
constexpr TypeRow kTypes[] = {
    {"BOOL", 1, DataType::Bool, 1},         {"UINT8", 2, DataType::UInt8, 1},
    {"UINT16", 3, DataType::UInt16, 2},     {"UINT32", 4, DataType::UInt32, 4},
    {"UINT64", 5, DataType::UInt64, 8},     {"INT8", 6, DataType::Int8, 1},
    {"INT16", 7, DataType::Int16, 2},       {"INT32", 8, DataType::Int32, 4},
    {"INT64", 9, DataType::Int64, 8},       {"FP16", 10, DataType::Float16, 2},
    {"FP32", 11, DataType::Float, 4},       {"FP64", 12, DataType::Double, 8},
    {"BYTES", 13, DataType::String, 0},     {"BF16", 14, DataType::BFloat16, 2},
};

const TypeRow* FindProtocol(std::string_view name) {
  for (const auto& r : kTypes)
    if (name == r.protocol) return &r;
  return nullptr;
}

}  // namespace

DataType DataTypeFromProtocol(std::string_view name, const std::string& what) {
  const TypeRow* r = FindProtocol(name);
  if (!r) HN_THROW(kInvalidArgument, what, ": unknown datatype '", name, "'");
  if (r->dtype == DataType::Undefined)
    HN_THROW(kInvalidArgument, what, ": datatype ", name, " is not supported by hetnet models");
  return r->dtype;
}

const char* ProtocolDataType(DataType t) {
  if (t == DataType::Byte) return "UINT8";
  for (const auto& r : kTypes)
    if (r.dtype == t && r.dtype != DataType::Undefined) return r.protocol;
  return "";
}

std::string ProtocolNameOfConfigType(int config_type) {
  for (const auto& r : kTypes)
    if (r.config_type == config_type) return r.protocol;
  return "";
}

int ConfigTypeOfProtocolName(std::string_view name) {
  const TypeRow* r = FindProtocol(name);
  return r ? r->config_type : 0;
}

size_t ProtocolElementSize(std::string_view name) {
  const TypeRow* r = FindProtocol(name);
  return r ? r->size : 0;
}

int64_t CheckedElementCount(const std::vector<int64_t>& shape, int64_t max_elements, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) HN_THROW(kInvalidArgument, what, ": negative dimension ", d, " in shape");
    if (d != 0 && n > max_elements / d)
      HN_THROW(kInvalidArgument, what, ": shape has more than ", max_elements,
               " elements (the server's --max-tensor-elements limit)");
    n *= d;
  }
  if (n > max_elements)
    HN_THROW(kInvalidArgument, what, ": ", n, " elements exceed the server's --max-tensor-elements limit of ",
             max_elements);
  return n;
}

void DecodeBytesElements(const char* data, size_t size, int64_t count, std::string* out, const std::string& what) {
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (size - pos < 4) HN_THROW(kInvalidArgument, what, ": BYTES data ends before element ", i, " of ", count);
    uint32_t len;
    std::memcpy(&len, data + pos, 4);  // little-endian hosts only (x86-64, aarch64)
    pos += 4;
    if (size - pos < len)
      HN_THROW(kInvalidArgument, what, ": BYTES element ", i, " claims ", len, " bytes but only ", size - pos,
               " remain");
    if (out) out[i].assign(data + pos, len);
    pos += len;
  }
  if (pos != size)
    HN_THROW(kInvalidArgument, what, ": ", size - pos, " unexpected bytes after the ", count, " BYTES elements");
}

std::string EncodeBytesTensor(const Tensor& t) {
  const std::string* s = t.data<std::string>();
  size_t total = 0;
  for (int64_t i = 0; i < t.numel(); ++i) total += 4 + s[i].size();
  std::string out;
  out.reserve(total);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (s[i].size() > std::numeric_limits<uint32_t>::max())
      HN_THROW(kInvalidArgument, "BYTES element ", i, " is longer than 4 GiB");
    uint32_t len = static_cast<uint32_t>(s[i].size());
    out.append(reinterpret_cast<const char*>(&len), 4);
    out.append(s[i]);
  }
  return out;
}

std::string_view OutputBytes(const Tensor& t, std::string* scratch) {
  if (t.dtype() == DataType::String) {
    *scratch = EncodeBytesTensor(t);
    return *scratch;
  }
  if (t.numel() == 0) return {};
  return std::string_view(static_cast<const char*>(t.raw_data()), t.nbytes());
}

}  // namespace hetnet::serving
