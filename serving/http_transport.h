// Private to the HTTP transport (http_server.cc, http_connection.cc): the server object that owns
// the io_context, acceptor and threads, and one connection's state machine. Boost.Beast parsing on
// Asio, N I/O threads each with an io_context of its own (so a connection's handlers never run
// concurrently and need no strand), keep-alive without a request cap,
// header/body/connection limits, idle timeouts, gzip/deflate bodies both ways.
#pragma once

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
#include "serving/request_memory.h"

namespace hetnet::serving {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;


inline constexpr uint32_t kHeaderLimit = 16 * 1024;     // request line + headers (requirement 23)
inline constexpr uint64_t kMaxChunks = 65536;           // non-empty chunks per chunked body (Triton parity)
inline constexpr size_t kLingerBytes = 4 << 20;         // drained after an early answer before closing
inline constexpr auto kLingerTime = std::chrono::seconds(2);

// A malformed or incomplete request (as opposed to a clean close between requests, a timeout or a
// reset). An incomplete one is still answered: a client that half-closed reads the answer, and
// writing to one that has gone does no harm.
inline bool IsParseError(const beast::error_code& ec) {
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
  RequestMemoryBudget* request_memory = nullptr;  // bodies are charged to it (null: not counted)
};


class Connection;

class HttpTransport : public std::enable_shared_from_this<HttpTransport> {
 public:
  HttpTransport(TransportOptions options, std::unique_ptr<HttpRouter> router)
      : options_(std::move(options)),
        router_(std::move(router)),
        work_(net::make_work_guard(ioc_)),
        acceptor_(ioc_),
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
  // I/O threads 1..n-1 each run an io_context of their own (thread 0 runs ioc_, which also
  // accepts), and a connection stays on the one it was given: its reads, handlers and writes never
  // hop between threads, and one thread per io_context serializes them without a strand (strand
  // executor copies and locks were 7% of the server's CPU samples under load). (With one
  // io_context shared by all threads, asio passed each request's steps from thread to thread: five
  // context switches a request at concurrency 1, one now.)
  // Declared before ioc_ so they outlive it: ioc_'s pending accept holds a socket bound to one of
  // them (TSan: destroying it after its loop used a destroyed mutex).
  struct Loop {
    net::io_context ioc;
    net::executor_work_guard<net::io_context::executor_type> work{net::make_work_guard(ioc)};
  };
  std::vector<std::unique_ptr<Loop>> loops_;
  size_t next_loop_ = 0;  // round-robin over ioc_ and loops_, on the accepting thread only
  // Declared last so they go first: pending handlers (which own connections) are destroyed while
  // the members above still exist.
  net::io_context ioc_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
};


class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpTransport* transport, tcp::socket socket) : t_(transport), stream_(std::move(socket)) {
    chunk_cb_ = [this](uint64_t size, beast::string_view, beast::error_code& ec) {
      if (size > 0 && ++chunks_ > kMaxChunks) {
        too_many_chunks_ = true;
        ec = http::error::bad_chunk;
      } else if (lease_ && !lease_->Grow(size)) {
        over_budget_ = size;
        ec = http::error::bad_chunk;
      }
    };
  }
  ~Connection() { t_->Unregister(this); }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
  }
  // On the connection's thread: close the socket; pending operations end with operation_aborted.
  void Abort() {
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }
  // On the connection's thread, at shutdown: an idle connection closes now, a busy one after its response.
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
  void Refuse(int status, std::string_view message) { Refuse(HttpReply::Error(status, message)); }
  void Refuse(HttpReply r) {
    keep_alive_ = false;
    r.close = true;
    Write(std::move(r));
  }
  // The request's body would take `bytes` more than the request memory budget has left.
  void RefuseForMemory(uint64_t bytes);
  // Half-closes, drains what the client still sends for a while, then closes (so the client reads
  // the answer rather than a reset).
  void Linger();
  void DoLinger();

  HttpTransport* t_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // A body of declared length, read straight into place rather than through parser_ (ReadBody).
  std::shared_ptr<std::string> direct_body_;
  std::function<void(uint64_t, beast::string_view, beast::error_code&)> chunk_cb_;
  uint64_t chunks_ = 0;
  bool too_many_chunks_ = false;
  uint64_t over_budget_ = 0;  // a chunk of this size did not fit the request memory budget
  HttpRequest head_;          // the request being read, without its body
  // What the request being read or answered holds of the request memory budget; released once the
  // answer is written.
  std::shared_ptr<RequestMemoryLease> lease_;
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

}  // namespace hetnet::serving
