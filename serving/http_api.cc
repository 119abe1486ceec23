// Routing of the KServe v2 / Triton REST API (serving-facts §2.1; requirements 14-27, 35) and of the
// metrics endpoint. Answers come from InferenceServer; protobuf answers are printed by ToTritonJson.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <mutex>
#include <optional>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "serving/auth.h"
#include "serving/http_infer_codec.h"
#include "serving/http_routes.h"
#include "serving/http_server.h"
#include "serving/http_shared_memory.h"
#include "serving/inference_server.h"
#include "serving/proto_json.h"
#include "serving/repository_worker.h"
#include "serving/request_memory.h"

namespace hetnet::serving {

namespace {

std::string Base64Decode(std::string_view in, const std::string& what) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int v = value(c);
    if (v < 0) HN_THROW(kInvalidArgument, what, " is not valid base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

// The "models" array of a RepositoryIndexResponse printed as Triton JSON (the HTTP API answers the
// bare array).
std::string IndexArray(const inference::RepositoryIndexResponse& index) {
  rapidjson::Document doc;
  ParseJson(ToTritonJson(index), &doc);
  auto it = doc.FindMember("models");
  if (it == doc.MemberEnd() || !it->value.IsArray()) return "[]";
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  it->value.Accept(writer);
  return std::string(buf.GetString(), buf.GetSize());
}

// Charges the parse of a request's JSON (RapidJSON's DOM) to the request's memory lease while it
// lives: a 64 MiB body of "0,0,..." parses into ~0.9 GiB of values.
class JsonParseCharge {
 public:
  JsonParseCharge(const HttpRequest& req, uint64_t json_bytes)
      : lease_(req.memory.get()), bytes_(json_bytes * kJsonParseBytesPerByte) {
    if (lease_) lease_->GrowOrThrow(bytes_, "the request's JSON");
  }
  ~JsonParseCharge() {
    if (lease_) lease_->Shrink(bytes_);
  }
  JsonParseCharge(const JsonParseCharge&) = delete;
  JsonParseCharge& operator=(const JsonParseCharge&) = delete;

 private:
  RequestMemoryLease* lease_;
  uint64_t bytes_;
};

// Bytes of JSON in an infer body: Inference-Header-Content-Length when it is a number within the
// body (the decoder refuses other values), else the whole body.
uint64_t InferJsonBytes(const HttpRequest& req) {
  const uint64_t body = req.body->size();
  const std::string* h = req.Header("Inference-Header-Content-Length");
  uint64_t n = 0;
  if (!h || std::from_chars(h->data(), h->data() + h->size(), n).ec != std::errc()) return body;
  return std::min(n, body);
}

class InferenceRouter : public HttpRouter {
 public:
  InferenceRouter(InferenceServer* server, HttpOptions options) : server_(server), options_(std::move(options)) {}
  ~InferenceRouter() override { Shutdown(); }
  // Waits for repository operations in progress (their answers go nowhere by now), so none runs
  // on after the front end, and the server, are gone.
  void Shutdown() override { repository_.Join(); }

  // Credentials are checked before the body is read, so a client without them cannot make the
  // server receive (and hold) up to --http-max-input-size bytes per connection.
  std::optional<HttpReply> Screen(const HttpRequest& head) override {
    std::optional<Route> r = RouteOf(head.target);
    if (!r) return std::nullopt;  // Handle answers 404
    return Unauthorized(head, *r);
  }

  void Handle(HttpRequest req, std::shared_ptr<HttpExchange> ex) override {
    try {
      Dispatch(std::move(req), ex);
    } catch (const Error& e) {
      ex->Reply(ErrorReply(e, options_.queue_full_status));
    } catch (const std::exception& e) {
      ex->Reply(HttpReply::Error(500, e.what()));
    }
  }

 private:
  std::optional<HttpReply> Unauthorized(const HttpRequest& req, const Route& r) const {
    if (options_.auth_token.empty() || (r.health && options_.auth_health_open)) return std::nullopt;
    const std::string* auth = req.Header("Authorization");
    if (auth && AuthorizationMatches(options_.auth_token, *auth)) return std::nullopt;
    auto reply = HttpReply::Error(401, "Unauthorized");
    reply.headers.emplace_back("WWW-Authenticate", "Bearer");
    return reply;
  }

  void Dispatch(HttpRequest req, const std::shared_ptr<HttpExchange>& ex) {
    std::string_view target = req.target;
    std::string_view query = target.find('?') == std::string_view::npos ? std::string_view()
                                                                        : target.substr(target.find('?') + 1);
    std::optional<Route> route = RouteOf(req.target);
    if (!route) return ex->Reply(HttpReply::Error(404, "Not Found"));
    Route r = std::move(*route);
    if (auto refusal = Unauthorized(req, r)) return ex->Reply(std::move(*refusal));
    if (r.op == Op::kNone) return ex->Reply(HttpReply::Error(404, "Not Found"));
    if (req.method != r.method) {
      auto reply = HttpReply::Error(405, "Method Not Allowed");
      reply.headers.emplace_back("Allow", r.method);
      return ex->Reply(std::move(reply));
    }

    switch (r.op) {
      case Op::kLive: {
        bool live = server_->IsLive();
        return ex->Reply(HttpReply::Json(live ? 200 : 503, live ? "{\"live\":true}" : "{\"live\":false}"));
      }
      case Op::kReady: {
        bool ready = server_->IsReady();
        return ex->Reply(HttpReply::Json(ready ? 200 : 503, ready ? "{\"ready\":true}" : "{\"ready\":false}"));
      }
      case Op::kModelReady: {
        bool ready = server_->ModelReady(r.model, r.version);
        return ex->Reply(HttpReply::Json(ready ? 200 : 503, "{\"name\":" + JsonQuote(r.model) +
                                                                ",\"ready\":" + (ready ? "true" : "false") + "}"));
      }
      case Op::kServerMetadata:
        return ex->Reply(HttpReply::Json(200, ToTritonJson(server_->ServerMetadata())));
      case Op::kModelMetadata:
        return ex->Reply(HttpReply::Json(200, ToTritonJson(server_->ModelMetadata(r.model, r.version))));
      case Op::kModelConfig:
        return ex->Reply(HttpReply::Json(200, ToTritonJson(server_->ModelConfig(r.model, r.version))));
      case Op::kModelStats:
        return ex->Reply(HttpReply::Json(200, ToTritonJson(server_->ModelStatistics(r.model, r.version))));
      case Op::kPlacement: {
        if (QueryValue(query, "format") == "svg") {
          HttpReply reply;
          reply.content_type = "image/svg+xml";
          reply.body = server_->PlacementSvg(r.model, r.version);
          return ex->Reply(std::move(reply));
        }
        return ex->Reply(HttpReply::Json(200, server_->PlacementJson(r.model, r.version)));
      }
      case Op::kInfer:
        return Infer(std::move(req), std::move(r), ex);
      case Op::kRepoIndex:
      case Op::kRepoLoad:
      case Op::kRepoUnload:
        return Repository(std::move(req), std::move(r), ex);
      case Op::kShmStatus:
      case Op::kShmRegister:
      case Op::kShmUnregister:
      case Op::kCudaShm: {
        JsonParseCharge charge(req, req.body->size());
        return ex->Reply(SharedMemoryReply(server_, r, *req.body));
      }
      case Op::kNone:
        break;
    }
    ex->Reply(HttpReply::Error(404, "Not Found"));
  }

  void Infer(HttpRequest req, Route r, const std::shared_ptr<HttpExchange>& ex) {
    DecodedInfer decoded = [&] {
      JsonParseCharge charge(req, InferJsonBytes(req));
      return DecodeInferRequest(server_, r.model, r.version, req.body, req.Header("Inference-Header-Content-Length"));
    }();
    if (req.memory) {  // JSON tensor data was converted beside the body (binary data points into it)
      const auto begin = reinterpret_cast<uintptr_t>(req.body->data()), end = begin + req.body->size();
      uint64_t converted = 0;
      for (const auto& input : decoded.request->inputs) {
        const auto at = reinterpret_cast<uintptr_t>(input.data);
        if (at < begin || at >= end) converted += input.byte_size;
      }
      req.memory->GrowOrThrow(converted, "this request's tensors");
    }
    int queue_full_status = options_.queue_full_status;
    auto format = std::make_shared<const OutputFormat>(std::move(decoded.format));
    InferCallback done = [ex, format, queue_full_status](InferResult result) {
      if (result.error) return ex->Reply(ErrorReply(*result.error, queue_full_status));
      if (!result.response) {
        return ex->Reply(HttpReply::Error(500, "internal error: inference finished without a response"));
      }
      // Encode on the connection's I/O thread, not the server's.
      auto response = std::make_shared<std::unique_ptr<InferResponse>>(std::move(result.response));
      ex->Post([ex, format, response, queue_full_status] {
        try {
          ex->Reply(EncodeInferResponse(std::move(*response), *format));
        } catch (const Error& e) {
          ex->Reply(ErrorReply(e, queue_full_status));
        } catch (const std::exception& e) {
          ex->Reply(HttpReply::Error(500, e.what()));
        }
      });
    };
    server_->InferAsync(std::move(decoded.request), std::move(done), req.memory.get());
  }

  // Repository control may load nets and run warmup: off the I/O threads, on the repository worker.
  void Repository(HttpRequest req, Route r, const std::shared_ptr<HttpExchange>& ex) {
    // Parse here so malformed bodies are answered at once.
    bool ready_only = false;
    std::string config_json;
    std::map<std::string, std::string> files;
    const std::string& body = *req.body;
    bool blank = std::all_of(body.begin(), body.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
    if (!blank) {
      JsonParseCharge charge(req, body.size());
      rapidjson::Document doc;
      ParseJson(body, &doc);
      if (!doc.IsObject()) HN_THROW(kInvalidArgument, "the request body must be a JSON object");
      if (r.op == Op::kRepoIndex) {
        if (auto it = doc.FindMember("ready"); it != doc.MemberEnd()) {
          if (!it->value.IsBool()) HN_THROW(kInvalidArgument, "'ready' must be a boolean");
          ready_only = it->value.GetBool();
        }
      } else if (auto it = doc.FindMember("parameters"); it != doc.MemberEnd()) {
        if (!it->value.IsObject()) HN_THROW(kInvalidArgument, "'parameters' must be an object");
        for (const auto& m : it->value.GetObject()) {
          std::string key(m.name.GetString(), m.name.GetStringLength());
          if (r.op == Op::kRepoLoad && key == "config") {
            if (!m.value.IsString()) HN_THROW(kInvalidArgument, "parameter 'config' must be a JSON string");
            config_json.assign(m.value.GetString(), m.value.GetStringLength());
          } else if (r.op == Op::kRepoLoad && key.rfind("file:", 0) == 0) {
            if (!m.value.IsString()) HN_THROW(kInvalidArgument, "parameter '", key, "' must be a base64 string");
            files[key] = Base64Decode(std::string_view(m.value.GetString(), m.value.GetStringLength()),
                                      "parameter '" + key + "'");
          }
        }
      }
    }
    if (req.memory) {
      uint64_t decoded = config_json.size();
      for (const auto& [key, bytes] : files) decoded += bytes.size();
      req.memory->GrowOrThrow(decoded, "the load request's files");
    }
    InferenceServer* server = server_;
    int queue_full_status = options_.queue_full_status;
    // The request's memory stays charged until the load has read the files (loads wait in line).
    const bool posted = repository_.TryPost([server, ex, r = std::move(r), ready_only, config_json = std::move(config_json),
                                           files = std::move(files), queue_full_status, memory = req.memory] {
      try {
        if (r.op == Op::kRepoIndex) {
          ex->Reply(HttpReply::Json(200, IndexArray(server->RepositoryIndex(ready_only))));
        } else if (r.op == Op::kRepoLoad) {
          server->LoadModel(r.model, config_json, files);
          ex->Reply(HttpReply());
        } else {
          server->UnloadModel(r.model);
          ex->Reply(HttpReply());
        }
      } catch (const Error& e) {
        ex->Reply(ErrorReply(e, queue_full_status));
      } catch (const std::exception& e) {
        ex->Reply(HttpReply::Error(500, e.what()));
      }
    });
    HN_CHECK_KIND(kUnavailable, posted, repository_.BusyMessage());
  }

  InferenceServer* server_;
  HttpOptions options_;
  RepositoryWorker repository_;
};

class MetricsRouter : public HttpRouter {
 public:
  explicit MetricsRouter(InferenceServer* server) : server_(server) {}
  void Handle(HttpRequest req, std::shared_ptr<HttpExchange> ex) override {
    std::string_view path = std::string_view(req.target).substr(0, req.target.find('?'));
    if (path != "/metrics") return ex->Reply(HttpReply::Error(404, "Not Found"));
    if (req.method != "GET") {
      auto reply = HttpReply::Error(405, "Method Not Allowed");
      reply.headers.emplace_back("Allow", "GET");
      return ex->Reply(std::move(reply));
    }
    try {
      HttpReply reply;
      reply.content_type = "text/plain; version=0.0.4";
      reply.body = server_->MetricsText();
      ex->Reply(std::move(reply));
    } catch (const std::exception& e) {
      ex->Reply(HttpReply::Error(500, e.what()));
    }
  }

 private:
  InferenceServer* server_;
};

}  // namespace

std::unique_ptr<HttpRouter> MakeInferenceRouter(InferenceServer* server, const HttpOptions& options) {
  return std::make_unique<InferenceRouter>(server, options);
}

std::unique_ptr<HttpRouter> MakeMetricsRouter(InferenceServer* server) {
  return std::make_unique<MetricsRouter>(server);
}

}  // namespace hetnet::serving
