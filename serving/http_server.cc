// The HTTP/1.1 transport shared by HttpFrontEnd and MetricsFrontEnd: Boost.Beast parsing on Asio,
// N I/O threads on one io_context, one strand per connection, keep-alive without a request cap,
// header/body/connection limits, idle timeouts, gzip/deflate bodies both ways. Requests go to an
// HttpRouter; answers come back through an HttpExchange from any thread.
#include "serving/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "core/error.h"
#include "serving/inference_server.h"

namespace hetnet::serving {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr uint32_t kHeaderLimit = 16 * 1024;     // request line + headers (requirement 23)
constexpr uint64_t kMaxChunks = 65536;           // non-empty chunks per chunked body (Triton parity)
constexpr size_t kLingerBytes = 4 << 20;         // drained after an early answer before closing
constexpr auto kLingerTime = std::chrono::seconds(2);

// A malformed or incomplete request (as opposed to a clean close between requests, a timeout or a
// reset). An incomplete one is still answered: a client that half-closed reads the answer, and
// writing to one that has gone does no harm.
bool IsParseError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream;
}

struct TransportOptions {
  std::string what;  // "HTTP", "metrics"
  std::string address;
  int port = 0;
  size_t max_input_size = 64 << 20;
  int max_connections = 1024;
  int idle_timeout_secs = 60;
  int threads = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------

class Connection;

class HttpTransport : public std::enable_shared_from_this<HttpTransport> {
 public:
  HttpTransport(TransportOptions options, std::unique_ptr<HttpRouter> router)
      : options_(std::move(options)),
        router_(std::move(router)),
        work_(net::make_work_guard(ioc_)),
        acceptor_(net::make_strand(ioc_)),
        retry_timer_(acceptor_.get_executor()) {}

  ~HttpTransport() { Shutdown(); }

  void Start();
  int port() const { return port_; }
  void StopListening();
  void Shutdown();

  const TransportOptions& options() const { return options_; }
  HttpRouter* router() const { return router_.get(); }

  // Connections register so Shutdown can close them; the count enforces max_connections.
  void Register(Connection* c, std::weak_ptr<Connection> w) {
    std::lock_guard<std::mutex> lock(mu_);
    connections_[c] = std::move(w);
  }
  void Unregister(Connection* c) {
    std::lock_guard<std::mutex> lock(mu_);
    connections_.erase(c);
    open_connections_.fetch_sub(1);
    idle_cv_.notify_all();
  }
  // Under the lock so nothing is posted after Shutdown decided to stop the threads (which would
  // leave handlers, and what they own, behind in a dead io_context).
  template <typename Executor, typename Fn>
  bool PostIfRunning(const Executor& ex, Fn&& fn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    net::post(ex, std::forward<Fn>(fn));
    return true;
  }

 private:
  void DoAccept();
  void OnAccept(beast::error_code ec, tcp::socket socket);

  TransportOptions options_;
  std::unique_ptr<HttpRouter> router_;
  std::atomic<int> open_connections_{0};
  std::mutex mu_;
  std::condition_variable idle_cv_;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections_;
  bool stopping_ = false;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
  int port_ = 0;
  // Declared last so they go first: pending handlers (which own connections) are destroyed while
  // the members above still exist.
  net::io_context ioc_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
};

// ---------------------------------------------------------------------------------------------------

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpTransport* transport, tcp::socket socket) : t_(transport), stream_(std::move(socket)) {
    chunk_cb_ = [this](uint64_t size, beast::string_view, beast::error_code& ec) {
      if (size > 0 && ++chunks_ > kMaxChunks) {
        too_many_chunks_ = true;
        ec = http::error::bad_chunk;
      }
    };
  }
  ~Connection() { t_->Unregister(this); }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
  }
  // On the strand: close the socket; pending operations end with operation_aborted.
  void Abort() {
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }
  // On the strand, at shutdown: an idle connection closes now, a busy one after its response.
  void Drain() {
    draining_ = true;
    if (!busy_) Abort();
  }
  void Write(HttpReply reply);
  auto executor() { return stream_.get_executor(); }

 private:
  void SetTimeout() {
    if (t_->options().idle_timeout_secs > 0) {
      stream_.expires_after(std::chrono::seconds(t_->options().idle_timeout_secs));
    } else {
      stream_.expires_never();
    }
  }
  void ReadHeader();
  void OnHeader(beast::error_code ec);
  void ReadBody();
  void OnBody(beast::error_code ec);
  void Dispatch();
  void OnWrite(beast::error_code ec);
  // Answers a request whose body was not (fully) read, then closes.
  void Refuse(int status, std::string_view message) {
    keep_alive_ = false;
    auto r = HttpReply::Error(status, message);
    r.close = true;
    Write(std::move(r));
  }
  // Half-closes, drains what the client still sends for a while, then closes (so the client reads
  // the answer rather than a reset).
  void Linger();
  void DoLinger();

  HttpTransport* t_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::function<void(uint64_t, beast::string_view, beast::error_code&)> chunk_cb_;
  uint64_t chunks_ = 0;
  bool too_many_chunks_ = false;
  bool keep_alive_ = true;
  bool http10_ = false;
  bool head_request_ = false;  // answer without a body
  bool closed_ = false;
  bool busy_ = false;      // between a request's header and the end of its response
  bool draining_ = false;  // shutting down: close after the current response
  std::string response_encoding_;  // for the response being written
  // The response being written: header text, reply (owns the body parts), compressed body.
  std::string out_head_;
  HttpReply out_;
  std::string out_compressed_;
  std::vector<net::const_buffer> out_buffers_;
  size_t lingered_ = 0;
  std::chrono::steady_clock::time_point linger_deadline_;

  friend class ConnectionExchange;
};

// The answer side of one request; holds the transport (so the io_context outlives any callback)
// and the connection (so the answer has somewhere to go).
class ConnectionExchange : public HttpExchange {
 public:
  ConnectionExchange(std::shared_ptr<HttpTransport> t, std::shared_ptr<Connection> c)
      : transport_(std::move(t)), conn_(std::move(c)), executor_(conn_->executor()) {}
  ~ConnectionExchange() override {
    if (!replied_.load()) Reply(HttpReply::Error(500, "internal error: the request was dropped without an answer"));
  }
  void Reply(HttpReply reply) override {
    if (replied_.exchange(true)) return;
    auto shared = std::make_shared<HttpReply>(std::move(reply));
    transport_->PostIfRunning(executor_, [conn = conn_, shared]() mutable { conn->Write(std::move(*shared)); });
  }
  void Post(std::function<void()> fn) override { transport_->PostIfRunning(executor_, std::move(fn)); }

 private:
  // Declaration order matters: conn_ is released before transport_.
  std::shared_ptr<HttpTransport> transport_;
  std::shared_ptr<Connection> conn_;
  net::any_io_executor executor_;
  std::atomic<bool> replied_{false};
};

void Connection::ReadHeader() {
  busy_ = false;
  if (closed_) return;
  if (draining_) return Abort();
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(boost::none);  // checked against Content-Length once the header is in
  parser_->on_chunk_header(chunk_cb_);
  chunks_ = 0;
  too_many_chunks_ = false;
  head_request_ = false;
  response_encoding_.clear();
  SetTimeout();
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

void Connection::OnHeader(beast::error_code ec) {
  if (ec) {
    if (ec == http::error::header_limit) {
      return Refuse(431, MakeString("request header fields too large (limit ", kHeaderLimit, " bytes)"));
    }
    if (IsParseError(ec)) {
      return Refuse(400, MakeString("malformed HTTP request: ", ec.message()));
    }
    return Abort();  // closed by the peer, timeout, reset, shutdown
  }
  busy_ = true;
  const size_t limit = t_->options().max_input_size;
  if (auto len = parser_->content_length(); len && *len > limit) {
    return Refuse(400, TooLargeMessage(*len, limit));
  }
  parser_->body_limit(limit);
  if (parser_->is_done()) return OnBody({});
  auto& req = parser_->get();
  auto expect = req.find(http::field::expect);
  if (expect != req.end() && IEquals(expect->value(), "100-continue")) {
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    SetTimeout();
    return net::async_write(stream_, net::buffer(kContinue),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->Abort();
                              self->ReadBody();
                            });
  }
  ReadBody();
}

void Connection::ReadBody() {
  SetTimeout();
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

void Connection::OnBody(beast::error_code ec) {
  const size_t limit = t_->options().max_input_size;
  if (ec) {
    if (too_many_chunks_) {
      return Refuse(400, MakeString("request has more than ", kMaxChunks, " chunks"));
    }
    if (ec == http::error::body_limit) {
      return Refuse(400, TooLargeMessage(parser_->get().body().size() + 1, limit));
    }
    if (IsParseError(ec)) {
      return Refuse(400, MakeString("malformed HTTP request: ", ec.message()));
    }
    return Abort();
  }
  stream_.expires_never();  // the server may take its time; the write sets a new limit
  Dispatch();
}

void Connection::Dispatch() {
  auto msg = parser_->release();
  parser_.reset();
  keep_alive_ = msg.keep_alive();
  http10_ = msg.version() < 11;
  head_request_ = msg.method() == http::verb::head;
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.headers.reserve(std::distance(msg.begin(), msg.end()));
  for (const auto& f : msg) req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  req.body = std::make_shared<std::string>(std::move(msg.body()));
  response_encoding_ = ChooseEncoding(req.Header("Accept-Encoding"));

  if (const std::string* enc = req.Header("Content-Encoding")) {
    bool gzip = IEquals(*enc, "gzip") || IEquals(*enc, "x-gzip");
    bool deflate = IEquals(*enc, "deflate");
    if (gzip || deflate) {
      auto out = std::make_shared<std::string>();
      bool too_large = false;
      std::string err = Inflate(*req.body, false, t_->options().max_input_size, out.get(), &too_large);
      if (!err.empty() && !too_large && deflate) {
        err = Inflate(*req.body, true, t_->options().max_input_size, out.get(), &too_large);
      }
      if (!err.empty()) {
        auto r = HttpReply::Error(400, err);
        return Write(std::move(r));
      }
      req.body = std::move(out);
    } else if (!IEquals(*enc, "identity") && !enc->empty()) {
      return Write(HttpReply::Error(415, MakeString("unsupported Content-Encoding '", *enc, "'")));
    }
  }

  auto exchange = std::make_shared<ConnectionExchange>(t_->shared_from_this(), shared_from_this());
  try {
    t_->router()->Handle(std::move(req), exchange);
  } catch (const std::exception& e) {
    exchange->Reply(HttpReply::Error(500, MakeString("internal error: ", e.what())));
  }
}

void Connection::Write(HttpReply reply) {
  if (closed_) return;
  out_ = std::move(reply);
  if (out_.close) keep_alive_ = false;
  std::vector<std::string_view> pieces;
  pieces.reserve(1 + out_.parts.size());
  if (!out_.body.empty()) pieces.push_back(out_.body);
  for (auto p : out_.parts) {
    if (!p.empty()) pieces.push_back(p);
  }
  bool compressed = false;
  if (!response_encoding_.empty() && !pieces.empty() && out_.BodySize() > 0) {
    compressed = Deflate(pieces, response_encoding_ == "gzip", &out_compressed_);
    if (compressed) {
      pieces.clear();
      pieces.push_back(out_compressed_);
    }
  }
  size_t body_size = 0;
  for (auto p : pieces) body_size += p.size();

  out_head_.clear();
  out_head_ += "HTTP/1.1 ";
  out_head_ += std::to_string(out_.status);
  out_head_ += ' ';
  auto reason = http::obsolete_reason(static_cast<http::status>(out_.status));
  out_head_.append(reason.data(), reason.size());
  out_head_ += "\r\n";
  if (!out_.content_type.empty()) out_head_ += "Content-Type: " + out_.content_type + "\r\n";
  out_head_ += "Content-Length: " + std::to_string(body_size) + "\r\n";
  if (compressed) out_head_ += "Content-Encoding: " + response_encoding_ + "\r\n";
  for (const auto& [k, v] : out_.headers) out_head_ += k + ": " + v + "\r\n";
  if (!keep_alive_) {
    out_head_ += "Connection: close\r\n";
  } else if (http10_) {
    out_head_ += "Connection: keep-alive\r\n";
  }
  out_head_ += "\r\n";

  out_buffers_.clear();
  out_buffers_.push_back(net::buffer(out_head_));
  if (!head_request_) {
    for (auto p : pieces) out_buffers_.push_back(net::buffer(p.data(), p.size()));
  }
  SetTimeout();
  net::async_write(stream_, out_buffers_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnWrite(ec); });
}

void Connection::OnWrite(beast::error_code ec) {
  out_ = HttpReply();  // releases the response memory (output tensors) now
  out_compressed_.clear();
  out_compressed_.shrink_to_fit();
  if (ec || draining_) return Abort();
  if (!keep_alive_) return Linger();
  ReadHeader();
}

void Connection::Linger() {
  if (draining_) return Abort();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return Abort();
  lingered_ = 0;
  linger_deadline_ = std::chrono::steady_clock::now() + kLingerTime;
  DoLinger();
}

void Connection::DoLinger() {
  if (closed_) return;
  stream_.expires_at(linger_deadline_);
  buffer_.clear();  // what the client still sends is read into the buffer and dropped
  stream_.async_read_some(buffer_.prepare(16384), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->lingered_ += n;
    if (ec || self->lingered_ > kLingerBytes) return self->Abort();
    self->DoLinger();
  });
}

// ---------------------------------------------------------------------------------------------------

void HttpTransport::Start() {
  beast::error_code ec;
  auto fail = [&](const char* step) {
    HN_THROW(kUnavailable, "failed to start the ", options_.what, " server on ", options_.address, ":",
             options_.port, ": ", step, ": ", ec.message());
  };
  tcp::resolver resolver(ioc_);
  auto results = resolver.resolve(options_.address, std::to_string(options_.port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) fail("cannot resolve the address");
  tcp::endpoint endpoint = results.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) fail("socket");
  acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  acceptor_.bind(endpoint, ec);
  if (ec) fail("bind");
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) fail("listen");
  port_ = acceptor_.local_endpoint(ec).port();

  DoAccept();
  int n = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(n, 1);
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back([this] {
      while (true) {
        try {
          ioc_.run();
          return;
        } catch (const std::exception& e) {
          std::cerr << "hetnet serve: " << options_.what << " I/O thread: " << e.what() << std::endl;
        }
      }
    });
  }
}

void HttpTransport::DoAccept() {
  acceptor_.async_accept(net::make_strand(ioc_),
                         [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void HttpTransport::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (!acceptor_.is_open() || ec == net::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors and similar: wait a little rather than spin.
    retry_timer_.expires_after(std::chrono::milliseconds(50));
    retry_timer_.async_wait([this](beast::error_code e) {
      if (!e && acceptor_.is_open()) DoAccept();
    });
    return;
  }
  if (open_connections_.fetch_add(1) >= options_.max_connections) {
    open_connections_.fetch_sub(1);
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  } else {
    socket.set_option(tcp::no_delay(true), ec);
    auto conn = std::make_shared<Connection>(this, std::move(socket));
    Register(conn.get(), conn);
    conn->Start();
  }
  DoAccept();
}

void HttpTransport::StopListening() {
  std::promise<void> done;
  auto fut = done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    net::post(acceptor_.get_executor(), [this, &done] {
      beast::error_code ec;
      acceptor_.close(ec);
      retry_timer_.cancel();
      done.set_value();
    });
  }
  fut.wait();
}

void HttpTransport::Shutdown() {
  std::vector<std::shared_ptr<Connection>> conns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ || threads_.empty()) {
      stopped_ = true;
      return;
    }
  }
  StopListening();
  auto collect = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [p, w] : connections_) {
      if (auto c = w.lock()) conns.push_back(std::move(c));
    }
  };
  // Idle connections close now; responses being produced or written still go out (the server has
  // normally finished its requests before the front ends are shut down).
  collect();
  for (auto& c : conns) net::post(c->executor(), [c] { c->Drain(); });
  conns.clear();
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait_for(lock, std::chrono::seconds(3), [this] { return connections_.empty(); });
    stopping_ = true;
  }
  collect();
  for (auto& c : conns) net::post(c->executor(), [c] { c->Abort(); });
  conns.clear();
  work_.reset();
  {
    // Connections still waiting for the server hold a reference through their exchange; do not
    // wait for those beyond a moment.
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return connections_.empty(); });
    stopped_ = true;
  }
  ioc_.stop();
  for (auto& th : threads_) {
    if (th.get_id() == std::this_thread::get_id()) {
      th.detach();  // Shutdown from a handler: cannot join ourselves
    } else if (th.joinable()) {
      th.join();
    }
  }
  threads_.clear();
  router_->Shutdown();
}

// ---------------------------------------------------------------------------------------------------

HttpFrontEnd::HttpFrontEnd(InferenceServer* server, HttpOptions options) {
  TransportOptions t;
  t.what = "HTTP";
  t.address = options.address;
  t.port = options.port;
  t.max_input_size = options.max_input_size;
  t.max_connections = options.max_connections;
  t.idle_timeout_secs = options.idle_timeout_secs;
  t.threads = options.threads;
  transport_ = std::make_shared<HttpTransport>(std::move(t), MakeInferenceRouter(server, options));
  transport_->Start();
}
HttpFrontEnd::~HttpFrontEnd() { Shutdown(); }
int HttpFrontEnd::port() const { return transport_->port(); }
void HttpFrontEnd::StopListening() { transport_->StopListening(); }
void HttpFrontEnd::Shutdown() { transport_->Shutdown(); }

MetricsFrontEnd::MetricsFrontEnd(InferenceServer* server, MetricsOptions options) {
  TransportOptions t;
  t.what = "metrics";
  t.address = options.address;
  t.port = options.port;
  t.max_input_size = 64 * 1024;
  t.max_connections = 64;
  t.idle_timeout_secs = 60;
  t.threads = std::max(options.threads, 1);
  transport_ = std::make_shared<HttpTransport>(std::move(t), MakeMetricsRouter(server));
  transport_->Start();
}
MetricsFrontEnd::~MetricsFrontEnd() { Shutdown(); }
int MetricsFrontEnd::port() const { return transport_->port(); }
void MetricsFrontEnd::StopListening() { transport_->StopListening(); }
void MetricsFrontEnd::Shutdown() { transport_->Shutdown(); }

}  // namespace hetnet::serving
