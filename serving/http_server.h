// HTTP/1.1 front ends of `hetnet serve` on Boost.Beast + Asio: the KServe v2 / Triton REST API
// (HttpFrontEnd, serving-facts §2.1-2.4, requirements 14-27) and the Prometheus endpoint
// (MetricsFrontEnd, requirement 32). Both are one server class (connections, limits, keep-alive,
// timeouts, request decompression, response compression) parameterized by a router; nothing here
// batches, validates tensors or runs nets, that is InferenceServer's job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetnet::serving {

class InferenceServer;
class RequestMemoryLease;

struct HttpOptions {
  std::string address = "127.0.0.1";
  int port = 8000;                     // 0 = an ephemeral port (see port())
  size_t max_input_size = 64 << 20;    // request body limit, applied after decompression
  int max_connections = 1024;          // further connections are closed at accept
  int idle_timeout_secs = 60;          // keep-alive idle limit, and limit on each read/write
  int threads = 0;                     // I/O threads; 0 = std::thread::hardware_concurrency()
  std::string auth_token;              // non-empty: "Authorization: Bearer <token>" required
  bool auth_health_open = false;       // health endpoints answer without the token
  int queue_full_status = 503;         // status for "Exceeds maximum queue size" (503 or 429)
};

struct MetricsOptions {
  std::string address = "127.0.0.1";
  int port = 8002;
  int threads = 1;
};

// ---- the seam between the transport (http_server.cc) and the routers (http_api.cc) ----

// One complete request, body decompressed. Header names compare case-insensitively.
struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<std::string> body;  // never null
  // What the request holds of the server's request memory (null where the transport has no
  // budget); the router grows it for its own parse state.
  std::shared_ptr<RequestMemoryLease> memory;
  // Value of the first header named `name`, or nullptr.
  const std::string* Header(std::string_view name) const;
};

// One response. The body on the wire is `body` followed by `parts` (scatter-gather, not concatenated);
// `holder` keeps the memory of `parts` alive until the write completes.
struct HttpReply {
  int status = 200;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<std::string_view> parts;
  std::shared_ptr<const void> holder;
  bool close = false;  // close the connection after this response

  size_t BodySize() const;
  // `{"error":"<message>"}` with that status.
  static HttpReply Error(int status, std::string_view message);
  static HttpReply Json(int status, std::string json);
};

// The answer side of one request: Reply may be called from any thread, exactly once; after the
// client has gone it does nothing. Post runs `fn` on the connection's executor (not inline).
// A JSON string literal: quoted, escaped; bytes that are not UTF-8 become U+FFFD.
std::string JsonQuote(std::string_view text);

class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  virtual void Reply(HttpReply reply) = 0;
  virtual void Post(std::function<void()> fn) = 0;
};

class HttpRouter {
 public:
  virtual ~HttpRouter() = default;
  // Called on an I/O thread once the header is in, before any of the body is read (`head` has an
  // empty body): a reply answers the request without reading the body (401 without credentials).
  virtual std::optional<HttpReply> Screen(const HttpRequest& head) { return std::nullopt; }
  // Called on an I/O thread; must not block (hand slow work elsewhere and Reply later).
  virtual void Handle(HttpRequest request, std::shared_ptr<HttpExchange> exchange) = 0;
  // Called once the I/O threads have stopped: finish or drop work handed elsewhere.
  virtual void Shutdown() {}
};

class HttpTransport;  // http_server.cc

// The KServe v2 / Triton REST API on `options.address:options.port`. The constructor binds and starts
// the I/O threads; a bind failure throws hetnet::Error kUnavailable naming address and port.
class HttpFrontEnd {
 public:
  HttpFrontEnd(InferenceServer* server, HttpOptions options);
  ~HttpFrontEnd();
  HttpFrontEnd(const HttpFrontEnd&) = delete;
  HttpFrontEnd& operator=(const HttpFrontEnd&) = delete;

  int port() const;
  // Closes the listening socket; open connections keep being served (drain).
  void StopListening();
  // Closes everything and joins the threads; idempotent. Responses of requests still running in the
  // server are dropped (the server's callbacks find the connection gone and do nothing).
  void Shutdown();

 private:
  std::shared_ptr<HttpTransport> transport_;
};

// GET /metrics with InferenceServer::MetricsText() ("text/plain; version=0.0.4").
class MetricsFrontEnd {
 public:
  MetricsFrontEnd(InferenceServer* server, MetricsOptions options);
  ~MetricsFrontEnd();
  MetricsFrontEnd(const MetricsFrontEnd&) = delete;
  MetricsFrontEnd& operator=(const MetricsFrontEnd&) = delete;

  int port() const;
  void StopListening();
  void Shutdown();

 private:
  std::shared_ptr<HttpTransport> transport_;
};

// Routers (http_api.cc).
std::unique_ptr<HttpRouter> MakeInferenceRouter(InferenceServer* server, const HttpOptions& options);
std::unique_ptr<HttpRouter> MakeMetricsRouter(InferenceServer* server);

// ---- helpers shared by the http_*.cc files (http_message.cc) ----

bool IEquals(std::string_view a, std::string_view b);  // ASCII case-insensitive
// Triton's text for a body over --http-max-input-size.
std::string TooLargeMessage(uint64_t n, size_t limit);
// Inflates a gzip or zlib body (raw_deflate: a raw deflate stream) into *out, at most `limit` bytes.
// Returns "" on success, else the client message; *too_large tells the size limit was hit.
std::string Inflate(const std::string& in, bool raw_deflate, size_t limit, std::string* out, bool* too_large);
// gzip (gzip=true) or zlib-format deflate of the concatenated pieces; false on a zlib failure.
bool Deflate(const std::vector<std::string_view>& pieces, bool gzip, std::string* out);
// "gzip", "deflate" or "" for an Accept-Encoding value (nullptr = header absent).
std::string ChooseEncoding(const std::string* accept);

}  // namespace hetnet::serving
