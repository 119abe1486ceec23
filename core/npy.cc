#include "core/npy.h"

#include <cctype>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/proto_io.h"

namespace hetnet {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DescrEntry {
  const char* code;  // without the byte-order character
  DataType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f4", DataType::Float}, {"f8", DataType::Double}, {"f2", DataType::Float16}, {"i1", DataType::Int8},
    {"u1", DataType::UInt8}, {"i2", DataType::Int16},  {"u2", DataType::UInt16},  {"i4", DataType::Int32},
    {"i8", DataType::Int64}, {"b1", DataType::Bool},   {"u4", DataType::UInt32},  {"u8", DataType::UInt64},
};

[[noreturn]] void Fail(const std::string& source, const std::string& what) {
  HN_THROW(kInvalidArgument, "'", source, "' is not a usable .npy file: ", what);
}

// Value text of `key` in the header dict, e.g. "'<f4'" or "(2, 3)" or "False".
std::string DictValue(const std::string& header, const std::string& key, const std::string& source) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) k = header.find("\"" + key + "\"");
  if (k == std::string::npos) Fail(source, "header has no '" + key + "' entry: " + header);
  size_t colon = header.find(':', k + key.size() + 2);
  if (colon == std::string::npos) Fail(source, "header entry '" + key + "' has no value");
  size_t b = colon + 1;
  while (b < header.size() && std::isspace(static_cast<unsigned char>(header[b]))) ++b;
  size_t e = b;
  if (b < header.size() && header[b] == '(') {
    e = header.find(')', b);
    if (e == std::string::npos) Fail(source, "header shape tuple is not closed");
    ++e;
  } else if (b < header.size() && (header[b] == '\'' || header[b] == '"')) {
    e = header.find(header[b], b + 1);
    if (e == std::string::npos) Fail(source, "header string for '" + key + "' is not closed");
    ++e;
  } else {
    while (e < header.size() && header[e] != ',' && header[e] != '}') ++e;
  }
  std::string v = header.substr(b, e - b);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v;
}

DataType ParseDescr(const std::string& quoted, const std::string& source) {
  if (quoted.size() < 3) Fail(source, "bad descr " + quoted);
  const std::string d = quoted.substr(1, quoted.size() - 2);
  if (d.size() == 3) {
    const char order = d[0];
    const std::string code = d.substr(1);
    for (const auto& e : kDescrs) {
      if (code != e.code) continue;
      const bool one_byte = code[1] == '1';
      if (order == '>' && !one_byte) Fail(source, "dtype " + d + " is big-endian; only little-endian is supported");
      if (order == '<' || order == '|' || order == '=' || order == '>') return e.dtype;
    }
  }
  Fail(source, "unsupported dtype '" + d + "' (supported: <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <i8 |b1)");
}

std::vector<int64_t> ParseShape(const std::string& tuple, const std::string& source) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')') Fail(source, "bad shape " + tuple);
  std::vector<int64_t> shape;
  size_t i = 1;
  while (i < tuple.size() - 1) {
    while (i < tuple.size() - 1 && (tuple[i] == ' ' || tuple[i] == ',')) ++i;
    if (i >= tuple.size() - 1) break;
    size_t j = i;
    while (j < tuple.size() - 1 && std::isdigit(static_cast<unsigned char>(tuple[j]))) ++j;
    // Skip an 'L' suffix written by Python 2.
    if (j == i) Fail(source, "bad shape " + tuple);
    if (j - i > 18) Fail(source, "dimension too large in shape " + tuple);
    shape.push_back(std::stoll(tuple.substr(i, j - i)));
    i = j;
    if (i < tuple.size() - 1 && tuple[i] == 'L') ++i;
  }
  return shape;
}

}  // namespace

bool LooksLikeNpy(const std::string& bytes) {
  return bytes.size() >= kMagicLen && std::memcmp(bytes.data(), kMagic, kMagicLen) == 0;
}

Tensor ParseNpy(const std::string& bytes, const std::string& source) {
  if (!LooksLikeNpy(bytes)) Fail(source, "missing the \\x93NUMPY magic");
  if (bytes.size() < 10) Fail(source, "file ends inside the preamble");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) Fail(source, "file ends inside the preamble");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    Fail(source, "unknown format version " + std::to_string(major) + "." +
                     std::to_string(static_cast<unsigned char>(bytes[7])));
  }
  if (bytes.size() < header_start + header_len) Fail(source, "file ends inside the header");
  const std::string header = bytes.substr(header_start, header_len);
  const DataType dtype = ParseDescr(DictValue(header, "descr", source), source);
  const std::string fortran = DictValue(header, "fortran_order", source);
  if (fortran == "True") Fail(source, "fortran_order is True; save a C-ordered array (np.ascontiguousarray)");
  if (fortran != "False") Fail(source, "bad fortran_order value " + fortran);
  const std::vector<int64_t> shape = ParseShape(DictValue(header, "shape", source), source);
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / d) Fail(source, "shape overflows");
    numel *= d;
  }
  const size_t data_start = header_start + header_len;
  const size_t have = bytes.size() - data_start;
  const size_t need = static_cast<size_t>(numel) * ItemSize(dtype);
  if (numel > 0 && need / static_cast<size_t>(numel) != ItemSize(dtype)) Fail(source, "shape overflows");
  if (have != need)
    Fail(source, MakeString("data holds ", have, " bytes but ", DataTypeName(dtype), ShapeToString(shape),
                            " needs ", need, have < need ? " (truncated)" : " (trailing bytes)"));
  Tensor t(Device::CPU());
  t.Resize(shape);
  void* out = t.raw_mutable_data(dtype);
  if (need) std::memcpy(out, bytes.data() + data_start, need);
  if (dtype == DataType::Bool) {  // normalise bytes other than 0/1
    auto* b = static_cast<uint8_t*>(out);
    for (int64_t i = 0; i < numel; ++i) b[i] = b[i] != 0;
  }
  return t;
}

Tensor ReadNpy(const std::string& path) { return ParseNpy(ReadFileBytes(path), path); }

std::string SerializeNpy(const Tensor& src) {
  const char* descr = nullptr;
  for (const auto& e : kDescrs)
    if (e.dtype == src.dtype() || (src.dtype() == DataType::Byte && e.dtype == DataType::UInt8)) descr = e.code;
  HN_ENFORCE(descr, "cannot write a ", DataTypeName(src.dtype()), " tensor as .npy");
  const Tensor host = src.device().is_cpu() ? src : src.To(Device::CPU());
  std::string shape = "(";
  for (size_t i = 0; i < host.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(host.shape()[i]);
  if (host.shape().size() == 1) shape += ",";
  shape += ")";
  const char order = descr[1] == '1' ? '|' : '<';
  std::string header = MakeString("{'descr': '", order, descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Preamble + header + '\n' padded with spaces to a multiple of 64 (what numpy writes).
  const bool v2 = header.size() + 11 > 65535;
  const size_t preamble = v2 ? 12 : 10;
  const size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += static_cast<char>(0);
  const size_t n = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  if (host.numel()) out.append(static_cast<const char*>(host.raw_data()), host.nbytes());
  return out;
}

void WriteNpy(const std::string& path, const Tensor& t) { WriteFileBytes(path, SerializeNpy(t)); }

}  // namespace hetnet
