// Infer responses of the HTTP front end (JSON header + binary parts written scatter-gather), the
// error body, and the datatype table the request decoder shares; see http_infer_codec.h.
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>

#include <rapidjson/writer.h>

#include "serving/http_infer_codec.h"
#include "serving/status_map.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving {

namespace rj = rapidjson;

WireKind WireKindOf(std::string_view dt) {
  static const std::pair<const char*, WireKind> kTable[] = {
      {"BOOL", WireKind::kBool}, {"INT8", WireKind::kI8},    {"INT16", WireKind::kI16}, {"INT32", WireKind::kI32},
      {"INT64", WireKind::kI64}, {"UINT8", WireKind::kU8},   {"UINT16", WireKind::kU16}, {"UINT32", WireKind::kU32},
      {"UINT64", WireKind::kU64}, {"FP32", WireKind::kF32},  {"FP64", WireKind::kF64},  {"BYTES", WireKind::kBytes},
      {"FP16", WireKind::kHalf}, {"BF16", WireKind::kHalf}};
  for (const auto& [name, kind] : kTable) {
    if (dt == name) return kind;
  }
  return WireKind::kUnknown;
}

size_t WireSize(WireKind k) {
  switch (k) {
    case WireKind::kBool: case WireKind::kI8: case WireKind::kU8: return 1;
    case WireKind::kI16: case WireKind::kU16: case WireKind::kHalf: return 2;
    case WireKind::kI32: case WireKind::kU32: case WireKind::kF32: return 4;
    case WireKind::kI64: case WireKind::kU64: case WireKind::kF64: return 8;
    default: return 0;
  }
}

namespace {

// Output stream for rapidjson::Writer appending to a std::string.
struct StringOut {
  using Ch = char;
  std::string* s;
  void Put(char c) { s->push_back(c); }
  void Flush() {}
};
using JsonWriter = rj::Writer<StringOut, rj::UTF8<>, rj::UTF8<>, rj::CrtAllocator, rj::kWriteNanAndInfFlag>;

void WriteNumber(JsonWriter& w, double v, bool is_float) {
  if (std::isnan(v)) {
    w.RawValue("NaN", 3, rj::kNumberType);
    return;
  }
  if (std::isinf(v)) {
    if (v > 0) {
      w.RawValue("Infinity", 8, rj::kNumberType);
    } else {
      w.RawValue("-Infinity", 9, rj::kNumberType);
    }
    return;
  }
  char buf[64];
  auto res = is_float ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                      : std::to_chars(buf, buf + sizeof(buf), v);
  w.RawValue(buf, static_cast<size_t>(res.ptr - buf), rj::kNumberType);
}

template <typename T>
T Load(const char* p) {
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

// Writes "data": [...] for the wire bytes of one output.
void WriteData(JsonWriter& w, std::string_view bytes, const std::string& dt, const std::string& name) {
  WireKind kind = WireKindOf(dt);
  size_t size = WireSize(kind);
  w.Key("data");
  w.StartArray();
  if (kind == WireKind::kBytes) {
    size_t pos = 0;
    while (pos + 4 <= bytes.size()) {
      uint32_t len = static_cast<uint8_t>(bytes[pos]) | static_cast<uint8_t>(bytes[pos + 1]) << 8 |
                     static_cast<uint8_t>(bytes[pos + 2]) << 16 | static_cast<uint32_t>(static_cast<uint8_t>(bytes[pos + 3])) << 24;
      pos += 4;
      if (len > bytes.size() - pos) break;
      w.String(bytes.data() + pos, len);
      pos += len;
    }
    w.EndArray();
    return;
  }
  if (size == 0) {
    throw Error(ErrorKind::kRuntime, MakeString("output '", name, "' has datatype '", dt, "' that JSON cannot carry"));
  }
  const char* p = bytes.data();
  const size_t n = bytes.size() / size;
  for (size_t i = 0; i < n; ++i, p += size) {
    switch (kind) {
      case WireKind::kBool: w.Bool(*p != 0); break;
      case WireKind::kI8: w.Int(Load<int8_t>(p)); break;
      case WireKind::kI16: w.Int(Load<int16_t>(p)); break;
      case WireKind::kI32: w.Int(Load<int32_t>(p)); break;
      case WireKind::kI64: w.Int64(Load<int64_t>(p)); break;
      case WireKind::kU8: w.Uint(Load<uint8_t>(p)); break;
      case WireKind::kU16: w.Uint(Load<uint16_t>(p)); break;
      case WireKind::kU32: w.Uint(Load<uint32_t>(p)); break;
      case WireKind::kU64: w.Uint64(Load<uint64_t>(p)); break;
      case WireKind::kF32: WriteNumber(w, Load<float>(p), true); break;
      case WireKind::kF64: WriteNumber(w, Load<double>(p), false); break;
      default: break;
    }
  }
  w.EndArray();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------

bool OutputFormat::IsBinary(const std::string& name, const std::string& datatype) const {
  if (datatype == "FP16" || datatype == "BF16") return true;  // JSON has no such numbers
  for (const auto& [n, b] : explicit_binary) {
    if (n == name) return b;
  }
  return binary_default;
}

HttpReply EncodeInferResponse(std::unique_ptr<InferResponse> response, const OutputFormat& format) {
  struct Holder {
    std::unique_ptr<InferResponse> response;
    std::deque<std::string> scratch;  // encoded BYTES outputs (a deque: addresses stay put)
  };
  auto holder = std::make_shared<Holder>();
  holder->response = std::move(response);
  const InferResponse& r = *holder->response;

  HttpReply reply;
  reply.body.reserve(256 + 128 * r.outputs.size());
  StringOut os{&reply.body};
  JsonWriter w(os);
  w.StartObject();
  w.Key("model_name");
  w.String(r.model_name.data(), static_cast<rj::SizeType>(r.model_name.size()));
  w.Key("model_version");
  w.String(r.model_version.data(), static_cast<rj::SizeType>(r.model_version.size()));
  if (!r.id.empty()) {
    w.Key("id");
    w.String(r.id.data(), static_cast<rj::SizeType>(r.id.size()));
  }
  w.Key("outputs");
  w.StartArray();
  bool any_binary = false;
  for (const InferOutput& o : r.outputs) {
    std::string* scratch = &holder->scratch.emplace_back();
    std::string_view bytes = o.shared_memory ? std::string_view() : OutputBytes(o.tensor, scratch);
    w.StartObject();
    w.Key("name");
    w.String(o.name.data(), static_cast<rj::SizeType>(o.name.size()));
    w.Key("datatype");
    w.String(o.datatype.data(), static_cast<rj::SizeType>(o.datatype.size()));
    w.Key("shape");
    w.StartArray();
    for (int64_t d : o.shape) w.Int64(d);
    w.EndArray();
    if (o.shared_memory) {  // written to the client's region: where, and no data
      w.Key("parameters");
      w.StartObject();
      w.Key("shared_memory_region");
      w.String(o.shared_memory->region.data(), static_cast<rj::SizeType>(o.shared_memory->region.size()));
      w.Key("shared_memory_byte_size");
      w.Uint64(o.shared_memory->byte_size);
      if (o.shared_memory->offset != 0) {
        w.Key("shared_memory_offset");
        w.Uint64(o.shared_memory->offset);
      }
      w.EndObject();
    } else if (format.IsBinary(o.name, o.datatype)) {
      any_binary = true;
      w.Key("parameters");
      w.StartObject();
      w.Key("binary_data_size");
      w.Uint64(bytes.size());
      w.EndObject();
      if (!bytes.empty()) reply.parts.push_back(bytes);
    } else {
      WriteData(w, bytes, o.datatype, o.name);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  reply.status = 200;
  if (any_binary) {
    reply.content_type = "application/octet-stream";
    reply.headers.emplace_back("Inference-Header-Content-Length", std::to_string(reply.body.size()));
  } else {
    reply.content_type = "application/json";
  }
  reply.holder = std::move(holder);
  return reply;
}

HttpReply ErrorReply(const Error& e, int queue_full_status) {
  std::string msg = ClientMessage(e);
  int status = HttpStatusOf(e.kind());
  bool queue_full = e.kind() == ErrorKind::kUnavailable && msg.find("Exceeds maximum queue size") != std::string::npos;
  if (queue_full) status = queue_full_status;
  const bool retry = queue_full || (e.kind() == ErrorKind::kUnavailable &&
                                    msg.find("at its request memory limit") != std::string::npos);
  HttpReply r = HttpReply::Error(status, msg);
  if (retry) r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace hetnet::serving
