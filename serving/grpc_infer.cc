// ModelInferRequest / ModelInferResponse <-> InferRequest / InferResponse for the gRPC front end.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "serving/grpc_server.h"
#include "serving/infer_request.h"
#include "serving/proto/grpc_service.pb.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving::grpc_detail {
namespace {

// Keeps the request message (and any typed contents converted to wire bytes) alive for as long as
// the server holds an input that points into it.
struct MessageHolder {
  std::shared_ptr<const inference::ModelInferRequest> message;
  std::vector<std::string> converted;  // sized once, never reallocated: inputs point into it
};

uint64_t UnsignedParameter(const std::string& key, const inference::InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case inference::InferParameter::kUint64Param:
      return p.uint64_param();
    case inference::InferParameter::kInt64Param:
      HN_CHECK_KIND(kInvalidArgument, p.int64_param() >= 0, "parameter '", key, "' must not be negative, got ",
                    p.int64_param());
      return static_cast<uint64_t>(p.int64_param());
    default:
      HN_THROW(kInvalidArgument, "parameter '", key, "' must be an integer (uint64_param or int64_param)");
  }
}

// The shared-memory parameters of a tensor (region: string_param; byte size and offset: int64_param
// or uint64_param), if it names a region.
template <typename Params>
std::optional<SharedMemoryRef> SharedMemoryParameters(const Params& params, const std::string& tensor) {
  const std::string* region = nullptr;
  std::optional<uint64_t> size, offset;
  for (const auto& [key, value] : params) {
    if (key == "shared_memory_region") {
      HN_CHECK_KIND(kInvalidArgument, value.parameter_choice_case() == inference::InferParameter::kStringParam,
                    "shared_memory_region of ", tensor, " must be a string_param");
      region = &value.string_param();
    } else if (key == "shared_memory_byte_size") {
      size = UnsignedParameter(key, value);
    } else if (key == "shared_memory_offset") {
      offset = UnsignedParameter(key, value);
    }
  }
  return SharedMemoryRefOf(region, size ? &*size : nullptr, offset ? &*offset : nullptr, tensor);
}

template <typename Out, typename Field>
void AppendAs(const Field& values, std::string* out) {
  const size_t start = out->size();
  out->resize(start + sizeof(Out) * static_cast<size_t>(values.size()));
  char* p = out->data() + start;
  for (const auto& v : values) {
    const Out x = static_cast<Out>(v);
    std::memcpy(p, &x, sizeof(Out));
    p += sizeof(Out);
  }
}

// Typed `contents` of one input in the protocol's wire form (little-endian, BYTES length-prefixed).
std::string ContentsToWire(const inference::ModelInferRequest::InferInputTensor& t, const std::string& model) {
  const auto& c = t.contents();
  const std::string& dt = t.datatype();
  // Which repeated field carries this datatype; every other one must be empty.
  int field = 0;
  if (dt == "BOOL") field = 1;
  else if (dt == "INT8" || dt == "INT16" || dt == "INT32") field = 2;
  else if (dt == "INT64") field = 3;
  else if (dt == "UINT8" || dt == "UINT16" || dt == "UINT32") field = 4;
  else if (dt == "UINT64") field = 5;
  else if (dt == "FP32") field = 6;
  else if (dt == "FP64") field = 7;
  else if (dt == "BYTES") field = 8;
  else if (dt == "FP16" || dt == "BF16")
    HN_THROW(kInvalidArgument, "inference input '", t.name(), "' for model '", model, "': ", dt,
             " data must be sent in raw_input_contents (typed contents have no ", dt, " field)");
  else
    HN_THROW(kInvalidArgument, "inference input '", t.name(), "' for model '", model, "' has unknown datatype '", dt,
             "'");
  const int sizes[9] = {0,
                        c.bool_contents_size(),
                        c.int_contents_size(),
                        c.int64_contents_size(),
                        c.uint_contents_size(),
                        c.uint64_contents_size(),
                        c.fp32_contents_size(),
                        c.fp64_contents_size(),
                        c.bytes_contents_size()};
  static const char* kNames[9] = {"",           "bool_contents", "int_contents",  "int64_contents", "uint_contents",
                                  "uint64_contents", "fp32_contents", "fp64_contents", "bytes_contents"};
  for (int f = 1; f <= 8; ++f) {
    HN_CHECK_KIND(kInvalidArgument, f == field || sizes[f] == 0, "inference input '", t.name(), "' for model '", model,
                  "' has datatype '", dt, "' but carries ", kNames[f], " (expected ", kNames[field], ")");
  }
  std::string out;
  if (dt == "BOOL") AppendAs<uint8_t>(c.bool_contents(), &out);
  else if (dt == "INT8") AppendAs<int8_t>(c.int_contents(), &out);
  else if (dt == "INT16") AppendAs<int16_t>(c.int_contents(), &out);
  else if (dt == "INT32") AppendAs<int32_t>(c.int_contents(), &out);
  else if (dt == "INT64") AppendAs<int64_t>(c.int64_contents(), &out);
  else if (dt == "UINT8") AppendAs<uint8_t>(c.uint_contents(), &out);
  else if (dt == "UINT16") AppendAs<uint16_t>(c.uint_contents(), &out);
  else if (dt == "UINT32") AppendAs<uint32_t>(c.uint_contents(), &out);
  else if (dt == "UINT64") AppendAs<uint64_t>(c.uint64_contents(), &out);
  else if (dt == "FP32") AppendAs<float>(c.fp32_contents(), &out);
  else if (dt == "FP64") AppendAs<double>(c.fp64_contents(), &out);
  else {  // BYTES: 4-byte little-endian length, then the bytes, per element
    size_t total = 0;
    for (const auto& s : c.bytes_contents()) total += 4 + s.size();
    out.reserve(total);
    for (const auto& s : c.bytes_contents()) {
      HN_CHECK_KIND(kInvalidArgument, s.size() <= UINT32_MAX, "inference input '", t.name(),
                    "': BYTES element longer than 4 GiB");
      const uint32_t n = static_cast<uint32_t>(s.size());
      const char len[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                           static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
      out.append(len, 4);
      out.append(s);
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<InferRequest> ToInferRequest(std::shared_ptr<const inference::ModelInferRequest> message) {
  const inference::ModelInferRequest& m = *message;
  auto request = std::make_unique<InferRequest>();
  request->model_name = m.model_name();
  request->model_version = m.model_version();
  request->id = m.id();

  for (const auto& [key, value] : m.parameters()) {
    if (key == "sequence_id" || key == "sequence_start" || key == "sequence_end") {
      HN_THROW(kInvalidArgument, "sequence batching not supported");
    } else if (key == "priority") {
      request->priority = UnsignedParameter(key, value);
    } else if (key == "timeout") {
      request->timeout_us = UnsignedParameter(key, value);
    }
    // Other keys (binary_data_output, headers, triton_*, custom ones) carry nothing hetnet uses.
  }

  const int n = m.inputs_size();
  std::vector<std::optional<SharedMemoryRef>> shm(static_cast<size_t>(n));
  int in_messages = 0;  // inputs whose bytes the message carries (raw_input_contents skips the others)
  for (int i = 0; i < n; ++i) {
    shm[i] = SharedMemoryParameters(m.inputs(i).parameters(), "input '" + m.inputs(i).name() + "'");
    if (!shm[i]) ++in_messages;
  }
  const bool raw = m.raw_input_contents_size() > 0;
  HN_CHECK_KIND(kInvalidArgument, !raw || m.raw_input_contents_size() == in_messages, "expected ", in_messages,
                " raw_input_contents (one per input not in shared memory, in input order) for model '",
                m.model_name(), "', got ", m.raw_input_contents_size());

  auto holder = std::make_shared<MessageHolder>();
  holder->message = message;
  holder->converted.resize(static_cast<size_t>(n));
  std::shared_ptr<const void> keep(holder, holder.get());

  request->inputs.reserve(static_cast<size_t>(n));
  int next_raw = 0;
  for (int i = 0; i < n; ++i) {
    const auto& t = m.inputs(i);
    InferInput in;
    in.name = t.name();
    in.datatype = t.datatype();
    in.shape.assign(t.shape().begin(), t.shape().end());
    if (shm[i]) {
      HN_CHECK_KIND(kInvalidArgument, !t.has_contents(), "unexpected 'content' provided when using shared memory ",
                    "for input tensor '", t.name(), "' for model '", m.model_name(), "'");
      in.shared_memory = std::move(shm[i]);
    } else if (raw) {
      HN_CHECK_KIND(kInvalidArgument, !t.has_contents(), "contents field must not be specified when using ",
                    "raw_input_contents for '", t.name(), "' for model '", m.model_name(), "'");
      const std::string& bytes = m.raw_input_contents(next_raw++);
      in.data = bytes.data();
      in.byte_size = bytes.size();
    } else if (t.has_contents()) {
      std::string& bytes = holder->converted[static_cast<size_t>(i)];
      bytes = ContentsToWire(t, m.model_name());
      in.data = bytes.data();
      in.byte_size = bytes.size();
    }
    in.holder = keep;
    request->inputs.push_back(std::move(in));
  }

  request->requested_outputs.reserve(static_cast<size_t>(m.outputs_size()));
  for (const auto& o : m.outputs()) {
    auto it = o.parameters().find("classification");
    HN_CHECK_KIND(kUnsupported, it == o.parameters().end(), "output '", o.name(),
                  "': the classification extension is not supported");
    if (auto ref = SharedMemoryParameters(o.parameters(), "output '" + o.name() + "'")) {
      request->output_shared_memory[o.name()] = std::move(*ref);
    }
    request->requested_outputs.push_back(o.name());
  }
  return request;
}

void ToModelInferResponse(const InferResponse& response, inference::ModelInferResponse* out) {
  out->set_model_name(response.model_name);
  out->set_model_version(response.model_version);
  out->set_id(response.id);
  for (const auto& o : response.outputs) {
    auto* t = out->add_outputs();
    t->set_name(o.name);
    t->set_datatype(o.datatype);
    for (int64_t d : o.shape) t->add_shape(d);
    if (o.shared_memory) {  // in the client's region; an empty entry keeps raw_output_contents aligned
      (*t->mutable_parameters())["shared_memory_region"].set_string_param(o.shared_memory->region);
      (*t->mutable_parameters())["shared_memory_byte_size"].set_int64_param(
          static_cast<int64_t>(o.shared_memory->byte_size));
      if (o.shared_memory->offset != 0)
        (*t->mutable_parameters())["shared_memory_offset"].set_int64_param(static_cast<int64_t>(o.shared_memory->offset));
      out->add_raw_output_contents();
      continue;
    }
    std::string scratch;
    const std::string_view bytes = OutputBytes(o.tensor, &scratch);
    std::string* dst = out->add_raw_output_contents();
    if (!scratch.empty() && bytes.data() == scratch.data() && bytes.size() == scratch.size()) {
      *dst = std::move(scratch);
    } else {
      dst->assign(bytes.data(), bytes.size());
    }
  }
}

}  // namespace hetnet::serving::grpc_detail
