// Infer request bodies of the HTTP front end (JSON, binary, mixed, raw) and the JSON parser with
// Triton's error wording; see http_infer_codec.h. Responses: http_infer_response.cc.
#include "serving/http_infer_codec.h"

#include <charconv>
#include <cstring>

#include "serving/inference_server.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving {

namespace rj = rapidjson;

namespace {

// ---- parsing ----

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void Invalid(const std::string& msg) { throw Error(ErrorKind::kInvalidArgument, msg); }

const rj::Value* Member(const rj::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// ---- JSON tensor data -> wire bytes ----

class JsonTensorWriter {
 public:
  JsonTensorWriter(WireKind kind, const std::string& dt, int64_t count, const std::string& name,
                   const std::vector<int64_t>& shape)
      : kind_(kind), dt_(dt), count_(count), name_(name), shape_(shape), size_(WireSize(kind)) {
    if (kind_ != WireKind::kBytes) buf_->resize(static_cast<size_t>(count_) * size_);
  }

  void Walk(const rj::Value& v) {
    if (v.IsArray()) {
      for (const auto& e : v.GetArray()) Walk(e);
      return;
    }
    if (n_ >= count_) TooMany();
    if (kind_ == WireKind::kBytes) {
      if (!v.IsString()) BadValue("a string");
      uint32_t len = v.GetStringLength();
      char le[4] = {char(len & 0xff), char((len >> 8) & 0xff), char((len >> 16) & 0xff), char(len >> 24)};
      buf_->append(le, 4);
      buf_->append(v.GetString(), len);
      ++n_;
      return;
    }
    char* dst = buf_->data() + static_cast<size_t>(n_) * size_;
    switch (kind_) {
      case WireKind::kBool: {
        if (!v.IsBool()) BadValue("true or false");
        *dst = v.GetBool() ? 1 : 0;
        break;
      }
      case WireKind::kI8: Put<int8_t>(dst, Signed(v, INT8_MIN, INT8_MAX)); break;
      case WireKind::kI16: Put<int16_t>(dst, Signed(v, INT16_MIN, INT16_MAX)); break;
      case WireKind::kI32: Put<int32_t>(dst, Signed(v, INT32_MIN, INT32_MAX)); break;
      case WireKind::kI64: Put<int64_t>(dst, Signed(v, INT64_MIN, INT64_MAX)); break;
      case WireKind::kU8: Put<uint8_t>(dst, Unsigned(v, UINT8_MAX)); break;
      case WireKind::kU16: Put<uint16_t>(dst, Unsigned(v, UINT16_MAX)); break;
      case WireKind::kU32: Put<uint32_t>(dst, Unsigned(v, UINT32_MAX)); break;
      case WireKind::kU64: Put<uint64_t>(dst, Unsigned(v, UINT64_MAX)); break;
      case WireKind::kF32: {
        if (!v.IsNumber()) BadValue("a number");
        Put<float>(dst, static_cast<float>(v.GetDouble()));
        break;
      }
      case WireKind::kF64: {
        if (!v.IsNumber()) BadValue("a number");
        Put<double>(dst, v.GetDouble());
        break;
      }
      default: BadValue("a value");
    }
    ++n_;
  }

  std::shared_ptr<std::string> Finish() {
    if (n_ != count_) {
      Invalid(MakeString("unexpected number of elements for input '", name_, "': shape ", ShapeText(shape_),
                         " holds ", count_, " elements but 'data' has ", n_));
    }
    return std::move(buf_);
  }

 private:
  template <typename T, typename V>
  static void Put(char* dst, V v) {
    T t = static_cast<T>(v);
    std::memcpy(dst, &t, sizeof(T));
  }
  int64_t Signed(const rj::Value& v, int64_t lo, int64_t hi) {
    if (!v.IsInt64()) BadValue("an integer");
    int64_t x = v.GetInt64();
    if (x < lo || x > hi) BadValue(MakeString("an integer in [", lo, ", ", hi, "]"));
    return x;
  }
  uint64_t Unsigned(const rj::Value& v, uint64_t hi) {
    if (!v.IsUint64()) BadValue("a non-negative integer");
    uint64_t x = v.GetUint64();
    if (x > hi) BadValue(MakeString("an integer in [0, ", hi, "]"));
    return x;
  }
  [[noreturn]] void BadValue(const std::string& expected) {
    Invalid(MakeString("unable to parse 'data' of input '", name_, "': element ", n_, " is not ", expected,
                       " as datatype ", dt_, " requires"));
  }
  [[noreturn]] void TooMany() {
    Invalid(MakeString("unexpected number of elements for input '", name_, "': shape ", ShapeText(shape_),
                       " holds ", count_, " elements but 'data' has more"));
  }

  WireKind kind_;
  const std::string& dt_;
  int64_t count_;
  const std::string& name_;
  const std::vector<int64_t>& shape_;
  size_t size_;
  int64_t n_ = 0;
  std::shared_ptr<std::string> buf_ = std::make_shared<std::string>();
};

std::vector<int64_t> ParseShape(const rj::Value* v, const std::string& name) {
  if (!v || !v->IsArray()) Invalid(MakeString("input '", name, "' is missing 'shape' (an array of integers)"));
  std::vector<int64_t> shape;
  shape.reserve(v->Size());
  for (const auto& d : v->GetArray()) {
    if (!d.IsInt64()) Invalid(MakeString("input '", name, "' has a 'shape' that is not an array of integers"));
    shape.push_back(d.GetInt64());
  }
  return shape;
}

int64_t ParseHeaderLength(const std::string& text, size_t body_size) {
  long long h = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  while (b < e && (*b == ' ' || *b == '\t')) ++b;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  auto [ptr, ec] = std::from_chars(b, e, h);
  if (b == e || ec != std::errc() || ptr != e) {
    Invalid(MakeString("Unable to parse Inference-Header-Content-Length: '", text, "' is not an integer"));
  }
  if (h < 0 || static_cast<unsigned long long>(h) > body_size) {
    Invalid(MakeString("Inference-Header-Content-Length ", h, " must be between 0 and the request body size ",
                       body_size));
  }
  return h;
}

// The shared-memory parameters of a tensor's "parameters" object (shared_memory_region,
// shared_memory_byte_size, shared_memory_offset), if it names a region.
std::optional<SharedMemoryRef> SharedMemoryParameters(const rj::Value& params, const std::string& tensor) {
  const rj::Value* region = Member(params, "shared_memory_region");
  const rj::Value* size = Member(params, "shared_memory_byte_size");
  const rj::Value* offset = Member(params, "shared_memory_offset");
  if (region && !region->IsString()) Invalid(MakeString("shared_memory_region of ", tensor, " must be a string"));
  if (size && !size->IsUint64()) {
    Invalid(MakeString("shared_memory_byte_size of ", tensor, " must be a non-negative integer"));
  }
  if (offset && !offset->IsUint64()) {
    Invalid(MakeString("shared_memory_offset of ", tensor, " must be a non-negative integer"));
  }
  std::string region_name = region ? std::string(region->GetString(), region->GetStringLength()) : std::string();
  const uint64_t size_value = size ? size->GetUint64() : 0, offset_value = offset ? offset->GetUint64() : 0;
  return SharedMemoryRefOf(region ? &region_name : nullptr, size ? &size_value : nullptr,
                           offset ? &offset_value : nullptr, tensor);
}

// Inference-Header-Content-Length: 0 — the body is the bytes of the model's only input, batch 1.
DecodedInfer DecodeRaw(InferenceServer* server, const std::string& model, const std::string& version,
                       std::shared_ptr<std::string> body) {
  inference::ModelConfig config = server->ModelConfig(model, version);
  if (config.input_size() != 1) {
    Invalid(MakeString("Raw request must only have 1 input (found 1) to be deduced but got ", config.input_size(),
                       " inputs in '", model, "' model configuration"));
  }
  const auto& in = config.input(0);
  DecodedInfer out;
  out.request = std::make_unique<InferRequest>();
  out.request->model_name = model;
  out.request->model_version = version;
  out.format.binary_default = true;
  InferInput input;
  input.name = in.name();
  input.datatype = ProtocolNameOfConfigType(static_cast<int>(in.data_type()));
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
  if (input.datatype == "BYTES") {
    if (!(dims.size() == 1 && dims[0] == 1)) {
      Invalid(MakeString("For BYTE datatype raw input '", input.name, "', the model must have input shape [1]"));
    }
  } else {
    int variable = -1;
    int64_t fixed = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) {
        if (variable >= 0) {
          Invalid(MakeString("The shape of the raw input '", input.name,
                             "' can not be deduced because there are more than one variable-sized dimension"));
        }
        variable = static_cast<int>(i);
      } else {
        fixed *= dims[i];
      }
    }
    if (variable >= 0) {
      size_t unit = static_cast<size_t>(fixed) * ProtocolElementSize(input.datatype);
      if (unit == 0 || body->size() % unit != 0) {
        Invalid(MakeString("The shape of the raw input '", input.name, "' can not be deduced: ", body->size(),
                           " bytes is not a multiple of ", unit, " bytes"));
      }
      dims[variable] = static_cast<int64_t>(body->size() / unit);
    }
  }
  if (config.max_batch_size() > 0) dims.insert(dims.begin(), 1);
  input.shape = std::move(dims);
  input.data = body->data();
  input.byte_size = body->size();
  input.holder = body;
  out.request->inputs.push_back(std::move(input));
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------

void ParseJson(std::string_view text, rj::Document* doc) {
  JsonParseOptions options;
  options.allow_nan_and_infinity = true;
  JsonParseResult r = ParseJsonDocument(text, doc, options);
  if (r.too_deep) Invalid(r.message);
  if (!r.ok) Invalid(MakeString("failed to parse the request JSON buffer: ", r.message, " at ", r.offset));
}

DecodedInfer DecodeInferRequest(InferenceServer* server, const std::string& model, const std::string& version,
                                std::shared_ptr<std::string> body, const std::string* header_length) {
  size_t json_len = body->size();
  if (header_length) {
    json_len = static_cast<size_t>(ParseHeaderLength(*header_length, body->size()));
    if (json_len == 0) return DecodeRaw(server, model, version, std::move(body));
  }
  rj::Document doc;
  ParseJson(std::string_view(body->data(), json_len), &doc);
  if (!doc.IsObject()) Invalid("the inference request JSON must be an object");

  DecodedInfer out;
  out.request = std::make_unique<InferRequest>();
  InferRequest& req = *out.request;
  req.model_name = model;
  req.model_version = version;
  const int64_t max_elements = server->options().max_tensor_elements;

  if (const rj::Value* id = Member(doc, "id")) {
    if (!id->IsString()) Invalid("the request 'id' must be a string");
    req.id.assign(id->GetString(), id->GetStringLength());
  }
  if (const rj::Value* params = Member(doc, "parameters")) {
    if (!params->IsObject()) Invalid("the request 'parameters' must be an object");
    for (const auto& m : params->GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      if (key.substr(0, 9) == "sequence_") Invalid("sequence batching not supported");
      if (key == "binary_data_output") {
        if (!m.value.IsBool()) Invalid("parameter 'binary_data_output' must be a boolean");
        out.format.binary_default = m.value.GetBool();
      } else if (key == "priority") {
        if (!m.value.IsUint64()) Invalid("parameter 'priority' must be a non-negative integer");
        req.priority = m.value.GetUint64();
      } else if (key == "timeout") {
        if (!m.value.IsUint64()) Invalid("parameter 'timeout' must be a non-negative integer (microseconds)");
        req.timeout_us = m.value.GetUint64();
      }
    }
  }

  const rj::Value* inputs = Member(doc, "inputs");
  if (!inputs || !inputs->IsArray()) Invalid("the inference request JSON must have an 'inputs' array");
  const char* binary = body->data() + json_len;
  const size_t binary_size = body->size() - json_len;
  size_t binary_used = 0;
  uint64_t binary_declared = 0;  // may exceed binary_size (then the request is refused)
  req.inputs.reserve(inputs->Size());
  for (const auto& in : inputs->GetArray()) {
    if (!in.IsObject()) Invalid("each element of 'inputs' must be an object");
    const rj::Value* name = Member(in, "name");
    if (!name || !name->IsString()) Invalid("an input is missing its 'name'");
    InferInput input;
    input.name.assign(name->GetString(), name->GetStringLength());
    // Duplicates, unknown names, datatypes and shapes are the server's to check (same texts for gRPC).
    const rj::Value* dt = Member(in, "datatype");
    if (!dt || !dt->IsString()) Invalid(MakeString("input '", input.name, "' is missing its 'datatype'"));
    input.datatype.assign(dt->GetString(), dt->GetStringLength());
    input.shape = ParseShape(Member(in, "shape"), input.name);
    const std::string what = MakeString("input '", input.name, "'");

    const rj::Value* binary_size_param = nullptr;
    if (const rj::Value* p = Member(in, "parameters")) {
      if (!p->IsObject()) Invalid(MakeString("the 'parameters' of input '", input.name, "' must be an object"));
      binary_size_param = Member(*p, "binary_data_size");
      input.shared_memory = SharedMemoryParameters(*p, what);
    }
    const rj::Value* data = Member(in, "data");
    if (input.shared_memory) {
      if (data || binary_size_param) {
        Invalid(MakeString("input '", input.name, "' names a shared memory region, so it must carry neither 'data' ",
                           "nor a binary_data_size parameter"));
      }
    } else if (binary_size_param) {
      if (data) Invalid(MakeString("input '", input.name, "' has both 'data' and a binary_data_size parameter"));
      if (!binary_size_param->IsUint64()) {
        Invalid(MakeString("binary_data_size of input '", input.name, "' must be a non-negative integer"));
      }
      uint64_t size = binary_size_param->GetUint64();
      size_t elem = ProtocolElementSize(input.datatype);
      if (elem > 0) {
        int64_t count = CheckedElementCount(input.shape, max_elements, what);
        if (static_cast<uint64_t>(count) * elem != size) {
          Invalid(MakeString("unexpected binary_data_size ", size, " for input '", input.name, "': shape ",
                             ShapeText(input.shape), " of ", input.datatype, " needs ", count * elem, " bytes"));
        }
      }
      binary_declared += size;
      if (binary_declared > binary_size) continue;  // reported below with the total
      input.data = binary + binary_used;
      input.byte_size = static_cast<size_t>(size);
      input.holder = body;
      binary_used += static_cast<size_t>(size);
    } else if (data) {
      WireKind kind = WireKindOf(input.datatype);
      if (kind == WireKind::kHalf) {
        Invalid(MakeString("input '", input.name, "' has datatype ", input.datatype,
                           ", which JSON cannot carry; send it as binary data"));
      }
      if (kind == WireKind::kUnknown) {
        Invalid(MakeString("input '", input.name, "' has unknown datatype '", input.datatype, "'"));
      }
      int64_t count = CheckedElementCount(input.shape, max_elements, what);
      JsonTensorWriter writer(kind, input.datatype, count, input.name, input.shape);
      writer.Walk(*data);
      auto buf = writer.Finish();
      input.data = buf->data();
      input.byte_size = buf->size();
      input.holder = std::move(buf);
    } else {
      Invalid(MakeString("input '", input.name, "' has neither 'data' nor a binary_data_size parameter"));
    }
    req.inputs.push_back(std::move(input));
  }
  if (binary_declared != binary_size) {
    Invalid(MakeString("unexpected total byte size of binary input data: the inputs' binary_data_size add up to ",
                       binary_declared, " bytes but ", binary_size,
                       " bytes follow the JSON header (Inference-Header-Content-Length)"));
  }

  if (const rj::Value* outputs = Member(doc, "outputs")) {
    if (!outputs->IsArray()) Invalid("the request 'outputs' must be an array");
    for (const auto& o : outputs->GetArray()) {
      if (!o.IsObject()) Invalid("each element of 'outputs' must be an object");
      const rj::Value* name = Member(o, "name");
      if (!name || !name->IsString()) Invalid("a requested output is missing its 'name'");
      std::string n(name->GetString(), name->GetStringLength());
      if (const rj::Value* p = Member(o, "parameters")) {
        if (!p->IsObject()) Invalid(MakeString("the 'parameters' of output '", n, "' must be an object"));
        if (const rj::Value* b = Member(*p, "binary_data")) {
          if (!b->IsBool()) Invalid(MakeString("binary_data of output '", n, "' must be a boolean"));
          out.format.explicit_binary.emplace_back(n, b->GetBool());
        }
        if (const rj::Value* c = Member(*p, "classification"); c && !(c->IsInt64() && c->GetInt64() == 0)) {
          throw Error(ErrorKind::kUnsupported, MakeString("classification is not supported (output '", n, "')"));
        }
        if (auto ref = SharedMemoryParameters(*p, MakeString("output '", n, "'"))) {
          req.output_shared_memory[n] = std::move(*ref);
        }
      }
      req.requested_outputs.push_back(std::move(n));
    }
  }
  return out;
}

}  // namespace hetnet::serving
