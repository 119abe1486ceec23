// ONNX tensors at import time: element types, checked decoding of TensorProto (typed fields,
// raw_data, external data files) and the init-net fill ops that recreate a value.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/checked_size.h"
#include "core/bfloat16.h"
#include "core/half.h"
#include "core/narrow_types.h"
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace fs = std::filesystem;
using C2 = caffe2::TensorProto;
using OT = onnx::TensorProto;

int64_t ConstTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool ConstTensor::is_real() const {
  return dtype == C2::FLOAT || dtype == C2::DOUBLE || dtype == C2::FLOAT16 || dtype == C2::BFLOAT16 ||
         IsNarrowFloat(static_cast<DataType>(dtype));
}

std::vector<int64_t> ConstTensor::Ints(const std::string& what) const {
  HN_CHECK_KIND(kInvalidArgument, !is_real() && dtype != C2::STRING, what, " must hold integers");
  return integer;
}

std::vector<double> ConstTensor::Reals() const {
  HN_CHECK_KIND(kInvalidArgument, dtype != C2::STRING, "a string tensor has no numeric value");
  if (is_real()) return real;
  return std::vector<double>(integer.begin(), integer.end());
}

ConstTensor ConstTensor::Float(std::vector<int64_t> dims, std::vector<double> values) {
  ConstTensor c;
  c.dims = std::move(dims);
  c.real = std::move(values);
  return c;
}

caffe2::TensorProto::DataType DtypeFromOnnx(int32_t t) {
  switch (t) {
    case OT::FLOAT: return C2::FLOAT;
    case OT::UINT8: return C2::UINT8;
    case OT::INT8: return C2::INT8;
    case OT::UINT16: return C2::UINT16;
    case OT::INT16: return C2::INT16;
    case OT::INT32: return C2::INT32;
    case OT::INT64: return C2::INT64;
    case OT::STRING: return C2::STRING;
    case OT::BOOL: return C2::BOOL;
    case OT::FLOAT16: return C2::FLOAT16;
    case OT::DOUBLE: return C2::DOUBLE;
    case OT::UINT32: return C2::UINT32;
    case OT::UINT64: return C2::UINT64;
    case OT::BFLOAT16: return C2::BFLOAT16;
    default:  // ONNX's narrow types (core/narrow_types.h: their number + 100), from FLOAT8E4M3FN to INT2
      if (IsNarrowDataType(static_cast<DataType>(t + kNarrowTypeOffset)))
        return static_cast<C2::DataType>(t + kNarrowTypeOffset);
      return C2::UNDEFINED;
  }
}

const char* OnnxTypeName(int32_t t) {
  if (OT::DataType_IsValid(t)) {
    static thread_local std::string name;
    name = OT::DataType_Name(static_cast<OT::DataType>(t));
    return name.c_str();
  }
  // Types newer than the ONNX 1.12 proto hetnet builds against (onnx.proto's numbering).
  static const char* const kNewer[] = {"BFLOAT16",  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                       "FLOAT8E5M2FNUZ", "UINT4",   "INT4",           "FLOAT4E2M1",
                                       "FLOAT8E8M0", "UINT2",       "INT2",           "FLOAT6E2M3",
                                       "FLOAT6E3M2"};
  return t >= 16 && t <= 28 ? kNewer[t - 16] : "an unknown type";
}

namespace {

size_t ByteWidth(C2::DataType t) {
  switch (t) {
    case C2::UINT8: case C2::INT8: case C2::BOOL: return 1;
    case C2::UINT16: case C2::INT16: case C2::FLOAT16: case C2::BFLOAT16: return 2;
    case C2::FLOAT: case C2::INT32: case C2::UINT32: return 4;
    default: return 8;  // INT64, UINT64, DOUBLE
  }
}

// Little-endian element i of `bytes` as the ConstTensor's value.
void DecodeRaw(const char* bytes, int64_t n, ConstTensor* c) {
  const size_t w = ByteWidth(c->dtype);
  (c->is_real() ? c->real.resize(n) : c->integer.resize(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* p = bytes + i * w;
    switch (c->dtype) {
      case C2::FLOAT: { float v; std::memcpy(&v, p, 4); c->real[i] = v; break; }
      case C2::DOUBLE: { double v; std::memcpy(&v, p, 8); c->real[i] = v; break; }
      case C2::FLOAT16: { Half h; std::memcpy(&h.bits, p, 2); c->real[i] = HalfToFloat(h); break; }
      case C2::BFLOAT16: { BFloat16 h; std::memcpy(&h.bits, p, 2); c->real[i] = BFloat16ToFloat(h); break; }
      case C2::UINT32: { uint32_t v; std::memcpy(&v, p, 4); c->integer[i] = v; break; }
      case C2::UINT8: c->integer[i] = static_cast<uint8_t>(*p); break;
      case C2::INT8: c->integer[i] = static_cast<int8_t>(*p); break;
      case C2::BOOL: c->integer[i] = *p != 0; break;
      case C2::UINT16: { uint16_t v; std::memcpy(&v, p, 2); c->integer[i] = v; break; }
      case C2::INT16: { int16_t v; std::memcpy(&v, p, 2); c->integer[i] = v; break; }
      case C2::INT32: { int32_t v; std::memcpy(&v, p, 4); c->integer[i] = v; break; }
      default: { int64_t v; std::memcpy(&v, p, 8); c->integer[i] = v; break; }  // UINT64: the same bits
    }
  }
}

// The bytes of an external-data tensor, read from a file that must lie inside base_dir.
std::string ReadExternal(const OT& t, const std::string& base_dir, size_t want, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    auto number = [&](const std::string& s) {
      char* end = nullptr;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      HN_CHECK_KIND(kInvalidArgument, !s.empty() && *end == 0 && v >= 0, what, ": external data ", kv.key(),
                    " '", s, "' is not a non-negative integer");
      return static_cast<int64_t>(v);
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = number(kv.value());
    else if (kv.key() == "length") length = number(kv.value());
  }
  HN_CHECK_KIND(kInvalidArgument, !location.empty(), what, ": external data without a location");
  HN_CHECK_KIND(kInvalidArgument, !base_dir.empty(), what, ": external data file '", location,
                "' but no base directory (import the model from a file, or pass base_dir)");
  HN_CHECK_KIND(kInvalidArgument, location.find('\0') == std::string::npos && !fs::path(location).is_absolute(),
                what, ": external data location '", location, "' must be a relative path");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  const fs::path file = fs::weakly_canonical(base / location, ec);
  HN_CHECK_KIND(kInvalidArgument, !ec, what, ": external data location '", location, "': ", ec.message());
  const auto rel = file.lexically_relative(base);
  HN_CHECK_KIND(kInvalidArgument, !rel.empty() && *rel.begin() != "..", what, ": external data location '",
                location, "' lies outside the model's directory ", base.string());
  const uintmax_t size = fs::file_size(file, ec);
  HN_CHECK_KIND(kNotFound, !ec, what, ": external data file ", file.string(), ": ", ec.message());
  if (length < 0) length = static_cast<int64_t>(size) - std::min<int64_t>(offset, size);
  HN_CHECK_KIND(kInvalidArgument, static_cast<uintmax_t>(offset) <= size && static_cast<uintmax_t>(length) <= size - offset,
                what, ": external data offset ", offset, " + length ", length, " exceeds the file's ", size,
                " bytes (", file.string(), ")");
  HN_CHECK_KIND(kInvalidArgument, static_cast<size_t>(length) == want, what, ": external data holds ", length,
                " bytes, the tensor needs ", want);
  std::ifstream in(file, std::ios::binary);
  std::string bytes(want, '\0');
  in.seekg(offset);
  in.read(bytes.data(), static_cast<std::streamsize>(want));
  HN_CHECK_KIND(kRuntime, in.good() || want == 0, what, ": could not read ", want, " bytes of ", file.string());
  return bytes;
}

// Elements per stored byte of a narrow type: ONNX packs 4-bit values two and 2-bit values four to a
// byte (element 0 in the low bits), in raw_data and (one byte per int32) in int32_data.
int NarrowPerByte(DataType t) {
  if (t == kUInt4 || t == kInt4 || t == kFloat4E2M1) return 2;
  return t == kUInt2 || t == kInt2 ? 4 : 1;
}

// A narrow-typed tensor's values (exact, as float or integer), from raw_data, external data or int32_data.
void DecodeNarrow(const OT& t, const std::string& base_dir, const std::string& what, int64_t n, ConstTensor* c) {
  const DataType type = static_cast<DataType>(c->dtype);
  const int per = NarrowPerByte(type), width = 8 / per;
  const size_t want = static_cast<size_t>((n + per - 1) / per);
  std::string bytes;
  if (t.data_location() == OT::EXTERNAL) {
    bytes = ReadExternal(t, base_dir, want, what);
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else {
    for (int32_t v : t.int32_data()) bytes.push_back(static_cast<char>(v));
  }
  HN_CHECK_KIND(kInvalidArgument, bytes.size() == want, what, " holds ", bytes.size(), " byte(s) of ",
                OnnxTypeName(t.data_type()), " data; its ", n, " element(s) need ", want);
  (c->is_real() ? c->real.resize(n) : c->integer.resize(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t byte = static_cast<uint8_t>(bytes[i / per]);
    const uint8_t bits = static_cast<uint8_t>((byte >> ((i % per) * width)) & ((1 << width) - 1));
    const float v = NarrowToFloat(type, bits);
    if (c->is_real()) c->real[i] = v;
    else c->integer[i] = static_cast<int64_t>(v);
  }
}

}  // namespace

ConstTensor ConstFromOnnx(const OT& t, const std::string& base_dir, const std::string& what_in) {
  const std::string what = "tensor '" + (what_in.empty() ? t.name() : what_in) + "'";
  ConstTensor c;
  c.dtype = DtypeFromOnnx(t.data_type());
  HN_CHECK_KIND(kUnsupported, c.dtype != C2::UNDEFINED, what, " has element type ", OnnxTypeName(t.data_type()),
                " (", t.data_type(), "), which hetnet does not have");
  HN_CHECK_KIND(kUnsupported, !t.has_segment(), what, " is segmented (not supported)");
  c.dims.assign(t.dims().begin(), t.dims().end());
  const int64_t n = CheckedNumel(c.dims, what.c_str());
  if (c.dtype == C2::STRING) {
    HN_CHECK_KIND(kInvalidArgument, t.string_data_size() == n, what, " has ", t.string_data_size(),
                  " strings for ", n, " elements");
    c.text.assign(t.string_data().begin(), t.string_data().end());
    return c;
  }
  if (IsNarrowDataType(static_cast<DataType>(c.dtype))) {
    DecodeNarrow(t, base_dir, what, n, &c);
    return c;
  }
  const size_t want = CheckedByteSize(n, ByteWidth(c.dtype), what.c_str());
  if (t.data_location() == OT::EXTERNAL) {
    const std::string bytes = ReadExternal(t, base_dir, want, what);
    DecodeRaw(bytes.data(), n, &c);
    return c;
  }
  if (t.has_raw_data()) {
    HN_CHECK_KIND(kInvalidArgument, t.raw_data().size() == want, what, " has ", t.raw_data().size(),
                  " bytes of raw_data, its dims ", n, " elements of ", ByteWidth(c.dtype), " bytes need ", want);
    DecodeRaw(t.raw_data().data(), n, &c);
    return c;
  }
  auto check_count = [&](int64_t got, const char* field) {
    HN_CHECK_KIND(kInvalidArgument, got == n, what, " has ", got, " values in ", field, " for ", n, " elements");
  };
  switch (c.dtype) {
    case C2::FLOAT:
      check_count(t.float_data_size(), "float_data");
      c.real.assign(t.float_data().begin(), t.float_data().end());
      break;
    case C2::DOUBLE:
      check_count(t.double_data_size(), "double_data");
      c.real.assign(t.double_data().begin(), t.double_data().end());
      break;
    case C2::INT64:
      check_count(t.int64_data_size(), "int64_data");
      c.integer.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case C2::FLOAT16:  // bit patterns in int32_data
      check_count(t.int32_data_size(), "int32_data");
      for (int32_t bits : t.int32_data()) {
        Half h;
        h.bits = static_cast<uint16_t>(bits);
        c.real.push_back(HalfToFloat(h));
      }
      break;
    case C2::BFLOAT16:  // bit patterns in int32_data
      check_count(t.int32_data_size(), "int32_data");
      for (int32_t bits : t.int32_data()) {
        BFloat16 h;
        h.bits = static_cast<uint16_t>(bits);
        c.real.push_back(BFloat16ToFloat(h));
      }
      break;
    case C2::UINT32:
    case C2::UINT64:  // uint64_data; a uint64 above INT64_MAX keeps its bits in `integer`
      check_count(t.uint64_data_size(), "uint64_data");
      for (uint64_t v : t.uint64_data()) c.integer.push_back(static_cast<int64_t>(c.dtype == C2::UINT32 ? v & 0xffffffffu : v));
      break;
    default:  // the narrower integers and BOOL live in int32_data
      check_count(t.int32_data_size(), "int32_data");
      c.integer.assign(t.int32_data().begin(), t.int32_data().end());
      break;
  }
  return c;
}

void AddArg(caffe2::OperatorDef& op, const std::string& name, int64_t value) {
  auto* a = op.add_arg();
  a->set_name(name);
  a->set_i(value);
}
void AddArgF(caffe2::OperatorDef& op, const std::string& name, float value) {
  auto* a = op.add_arg();
  a->set_name(name);
  a->set_f(value);
}
void AddArg(caffe2::OperatorDef& op, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = op.add_arg();
  a->set_name(name);
  for (int64_t v : values) a->add_ints(v);
}
void AddArg(caffe2::OperatorDef& op, const std::string& name, const std::string& value) {
  auto* a = op.add_arg();
  a->set_name(name);
  a->set_s(value);
}

void PinNarrowCastToCPU(caffe2::OperatorDef* cast, C2::DataType from, C2::DataType to) {
  if (!IsNarrowDataType(static_cast<DataType>(from)) && !IsNarrowDataType(static_cast<DataType>(to))) return;
  cast->mutable_device_option()->set_device_type(caffe2::PROTO_CPU);
  cast->mutable_device_option()->clear_device_id();
}

void AppendFill(caffe2::NetDef* net, const std::string& name, const ConstTensor& c,
                const caffe2::DeviceOption& device) {
  auto fill = [&](const std::string& type, const std::string& out) -> caffe2::Argument* {
    caffe2::OperatorDef* op = net->add_op();
    op->set_type(type);
    op->add_output(out);
    *op->mutable_device_option() = device;
    AddArg(*op, "shape", c.dims);
    auto* values = op->add_arg();
    values->set_name("values");
    return values;
  };
  auto cast = [&](const std::string& from) {
    caffe2::OperatorDef* op = net->add_op();
    op->set_type("Cast");
    op->add_input(from);
    op->add_output(name);
    *op->mutable_device_option() = device;
    PinNarrowCastToCPU(op, C2::FLOAT, c.dtype);
    AddArg(*op, "to", static_cast<int64_t>(c.dtype));
  };
  if (c.dtype == C2::DOUBLE) {
    // Caffe2's Argument holds floats only: a double that float cannot hold exactly is filled as the
    // sum of three floats (hi + mid + lo, exact for |x| in float's normal range) added in double.
    bool exact = true;
    for (double x : c.real) exact &= static_cast<double>(static_cast<float>(x)) == x || std::isnan(x);
    if (!exact) {
      const char* part_names[3] = {"__hi", "__mid", "__lo"};
      std::vector<double> rest = c.real;
      for (int p = 0; p < 3; ++p) {
        auto* v = fill("GivenTensorDoubleFill", name + part_names[p]);
        for (double& x : rest) {
          HN_CHECK_KIND(kUnsupported, std::isnan(x) || std::fabs(x) <= 3.4028234663852886e38, "double tensor '", name,
                        "' holds ", x, ", beyond what float-valued fill arguments can carry");
          const float part = static_cast<float>(x);
          v->add_floats(part);
          x = std::isfinite(x) ? x - part : 0.0;
        }
      }
      auto add = [&](const std::string& a, const std::string& b, const std::string& out) {
        caffe2::OperatorDef* op = net->add_op();
        op->set_type("Add");
        op->add_input(a);
        op->add_input(b);
        op->add_output(out);
        *op->mutable_device_option() = device;
      };
      add(name + "__hi", name + "__mid", name + "__himid");
      add(name + "__himid", name + "__lo", name);
      return;
    }
  }
  if (IsNarrowFloat(static_cast<DataType>(c.dtype))) {  // float32 holds every value exactly: a fill, then a Cast
    auto* v = fill("GivenTensorFill", name + "__f32");
    for (double x : c.real) v->add_floats(static_cast<float>(x));
    return cast(name + "__f32");
  }
  switch (c.dtype) {
    case C2::FLOAT: case C2::DOUBLE: case C2::FLOAT16: case C2::BFLOAT16: {
      const bool half = c.dtype == C2::FLOAT16 || c.dtype == C2::BFLOAT16;  // filled as float32, then a Cast
      auto* v = fill(c.dtype == C2::DOUBLE ? "GivenTensorDoubleFill" : "GivenTensorFill", half ? name + "__f32" : name);
      for (double x : c.real) v->add_floats(static_cast<float>(x));
      if (half) cast(name + "__f32");
      break;
    }
    case C2::STRING: {
      auto* v = fill("GivenTensorStringFill", name);
      for (const auto& s : c.text) v->add_strings(s);
      break;
    }
    case C2::INT32: case C2::INT64: case C2::BOOL: {
      auto* v = fill(c.dtype == C2::INT32 ? "GivenTensorIntFill" : c.dtype == C2::INT64 ? "GivenTensorInt64Fill"
                                                                                         : "GivenTensorBoolFill", name);
      for (int64_t x : c.integer) v->add_ints(x);
      break;
    }
    case C2::UINT32: case C2::UINT64: {  // an int64 fill (uint64 as its bits), then a Cast
      auto* v = fill("GivenTensorInt64Fill", name + "__i64");
      for (int64_t x : c.integer) v->add_ints(x);
      cast(name + "__i64");
      break;
    }
    default: {  // 8- and 16-bit integers and the 4- and 2-bit ones: an int32 fill, then a Cast
      auto* v = fill("GivenTensorIntFill", name + "__i32");
      for (int64_t x : c.integer) v->add_ints(x);
      cast(name + "__i32");
    }
  }
}

}  // namespace hetnet::onnxio
