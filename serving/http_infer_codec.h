// KServe v2 infer bodies over HTTP (serving-facts §2.2, §2.4; requirements 18-21, 25): JSON-only,
// binary-only, mixed and raw request bodies into an InferRequest whose binary inputs point into the
// body (never copied here), and InferResponse into a JSON header plus binary parts written
// scatter-gather. Also the depth-limited JSON parser and the error body every route uses.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "core/error.h"
#include "core/json_document.h"
#include "serving/http_server.h"
#include "serving/infer_request.h"

namespace hetnet::serving {

class InferenceServer;

// Parses `text` (not NUL-terminated) with ParseJsonDocument, NaN and Infinity allowed; nesting deeper
// than kMaxJsonDepth or invalid JSON throws kInvalidArgument with Triton's wording.
void ParseJson(std::string_view text, rapidjson::Document* doc);

// Which outputs are answered in binary form.
struct OutputFormat {
  bool binary_default = false;  // request parameters.binary_data_output (raw requests: true)
  // Requested outputs that set parameters.binary_data, with that value.
  std::vector<std::pair<std::string, bool>> explicit_binary;
  bool IsBinary(const std::string& name, const std::string& datatype) const;
};

struct DecodedInfer {
  std::unique_ptr<InferRequest> request;
  OutputFormat format;
};

// `header_length` is the Inference-Header-Content-Length value when the header was sent. Raw
// requests (header length 0) need the model's config, read from `server`. Throws hetnet::Error.
DecodedInfer DecodeInferRequest(InferenceServer* server, const std::string& model, const std::string& version,
                                std::shared_ptr<std::string> body, const std::string* header_length);

// 200 with application/json, or application/octet-stream + Inference-Header-Content-Length when any
// output is binary; the reply owns the response (binary parts point into its output tensors).
HttpReply EncodeInferResponse(std::unique_ptr<InferResponse> response, const OutputFormat& format);

// ---- shared by http_infer_codec.cc (requests) and http_infer_response.cc (responses) ----

// Protocol datatypes as JSON and the wire see them.
enum class WireKind { kBool, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64, kBytes, kHalf, kUnknown };
WireKind WireKindOf(std::string_view datatype);  // kHalf: FP16 and BF16; kUnknown: any other name
size_t WireSize(WireKind kind);                  // bytes per element; 0 for BYTES and unknown

// {"error": ClientMessage(e)} with HttpStatusOf(kind); queue-full gets `queue_full_status` and
// Retry-After: 1.
HttpReply ErrorReply(const Error& e, int queue_full_status);

}  // namespace hetnet::serving
