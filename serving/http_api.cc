// Routing of the KServe v2 / Triton REST API (serving-facts §2.1; requirements 14-27, 35) and of the
// metrics endpoint. Answers come from InferenceServer; protobuf answers are printed by ToTritonJson.
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include <boost/asio/post.hpp>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <boost/asio/thread_pool.hpp>

#include "serving/auth.h"
#include "serving/http_infer_codec.h"
#include "serving/http_server.h"
#include "serving/inference_server.h"
#include "serving/proto_json.h"

namespace hetnet::serving {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoding; false on a malformed escape.
bool PercentDecode(std::string_view in, std::string* out, bool plus_is_space = false) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

enum class Op {
  kNone,
  kLive,
  kReady,
  kServerMetadata,
  kModelMetadata,
  kModelReady,
  kModelConfig,
  kModelStats,
  kPlacement,
  kInfer,
  kRepoIndex,
  kRepoLoad,
  kRepoUnload,
};

struct Route {
  Op op = Op::kNone;
  const char* method = "GET";
  std::string model;
  std::string version;
  bool health = false;
};

// Matches the path segments (decoded) against the API; Op::kNone = 404.
Route Match(const std::vector<std::string>& s) {
  Route r;
  const size_t n = s.size();
  if (n == 0 || s[0] != "v2") return r;
  if (n == 1) {
    r.op = Op::kServerMetadata;
    return r;
  }
  if (s[1] == "health" && n == 3) {
    if (s[2] == "live") r.op = Op::kLive;
    if (s[2] == "ready") r.op = Op::kReady;
    r.health = true;
    return r;
  }
  if (s[1] == "repository") {
    r.method = "POST";
    if (n == 3 && s[2] == "index") r.op = Op::kRepoIndex;
    if (n == 5 && s[2] == "models" && !s[3].empty()) {
      r.model = s[3];
      if (s[4] == "load") r.op = Op::kRepoLoad;
      if (s[4] == "unload") r.op = Op::kRepoUnload;
    }
    return r;
  }
  if (s[1] != "models" || n < 3 || s[2].empty()) return r;
  if (n == 3 && s[2] == "stats") {  // every model's statistics, before the model routes (Triton)
    r.op = Op::kModelStats;
    return r;
  }
  r.model = s[2];
  size_t i = 3;
  if (n >= 5 && s[3] == "versions") {
    if (!AllDigits(s[4])) return r;
    r.version = s[4];
    i = 5;
  }
  if (i == n) {
    r.op = Op::kModelMetadata;
  } else if (i + 1 == n) {
    const std::string& a = s[i];
    if (a == "ready") {
      r.op = Op::kModelReady;
      r.health = true;
    } else if (a == "config") {
      r.op = Op::kModelConfig;
    } else if (a == "stats") {
      r.op = Op::kModelStats;
    } else if (a == "placement") {
      r.op = Op::kPlacement;
    } else if (a == "infer") {
      r.op = Op::kInfer;
      r.method = "POST";
    }
  }
  return r;
}

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

class InferenceRouter : public HttpRouter {
 public:
  InferenceRouter(InferenceServer* server, HttpOptions options) : server_(server), options_(std::move(options)) {}
  ~InferenceRouter() override { Shutdown(); }
  // Waits for repository operations in progress (their answers go nowhere by now), so none runs
  // on after the front end, and the server, are gone.
  void Shutdown() override { std::call_once(joined_, [this] { blocking_.join(); }); }

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
  void Dispatch(HttpRequest req, const std::shared_ptr<HttpExchange>& ex) {
    std::string_view target = req.target;
    std::string_view path = target.substr(0, target.find('?'));
    std::string_view query = target.size() > path.size() ? target.substr(path.size() + 1) : std::string_view();
    std::vector<std::string> segs;
    std::string seg;
    if (path.empty() || path[0] != '/') return ex->Reply(HttpReply::Error(404, "Not Found"));
    size_t pos = 1;
    while (true) {
      size_t slash = path.find('/', pos);
      std::string_view raw = path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
      if (!PercentDecode(raw, &seg)) return ex->Reply(HttpReply::Error(404, "Not Found"));
      segs.push_back(seg);
      if (slash == std::string_view::npos) break;
      pos = slash + 1;
    }
    Route r = Match(segs);

    if (!options_.auth_token.empty() && !(r.health && options_.auth_health_open)) {
      const std::string* auth = req.Header("Authorization");
      if (!auth || !AuthorizationMatches(options_.auth_token, *auth)) {
        auto reply = HttpReply::Error(401, "Unauthorized");
        reply.headers.emplace_back("WWW-Authenticate", "Bearer");
        return ex->Reply(std::move(reply));
      }
    }
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
      case Op::kNone:
        break;
    }
    ex->Reply(HttpReply::Error(404, "Not Found"));
  }

  static std::string QueryValue(std::string_view query, std::string_view key) {
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view item = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      size_t eq = item.find('=');
      std::string k, v;
      if (!PercentDecode(item.substr(0, eq), &k, true)) continue;
      if (k != key) continue;
      if (eq != std::string_view::npos && PercentDecode(item.substr(eq + 1), &v, true)) return v;
      return "";
    }
    return "";
  }

  void Infer(HttpRequest req, Route r, const std::shared_ptr<HttpExchange>& ex) {
    DecodedInfer decoded =
        DecodeInferRequest(server_, r.model, r.version, req.body, req.Header("Inference-Header-Content-Length"));
    int queue_full_status = options_.queue_full_status;
    auto format = std::make_shared<const OutputFormat>(std::move(decoded.format));
    server_->InferAsync(std::move(decoded.request), [ex, format, queue_full_status](InferResult result) {
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
    });
  }

  // Repository control may load nets and run warmup: off the I/O threads.
  void Repository(HttpRequest req, Route r, const std::shared_ptr<HttpExchange>& ex) {
    // Parse here so malformed bodies are answered at once.
    bool ready_only = false;
    std::string config_json;
    std::map<std::string, std::string> files;
    const std::string& body = *req.body;
    bool blank = std::all_of(body.begin(), body.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
    if (!blank) {
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
    InferenceServer* server = server_;
    int queue_full_status = options_.queue_full_status;
    boost::asio::post(blocking_, [server, ex, r = std::move(r), ready_only, config_json = std::move(config_json),
                                  files = std::move(files), queue_full_status] {
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
  }

  InferenceServer* server_;
  HttpOptions options_;
  boost::asio::thread_pool blocking_{1};
  std::once_flag joined_;
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
