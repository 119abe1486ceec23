// The HTTP/1.1 transport shared by HttpFrontEnd and MetricsFrontEnd (accepting, threads, shutdown)
// and the two front ends. Requests go to an HttpRouter; answers come back through an HttpExchange
// from any thread (connections: http_connection.cc).
#include "serving/http_transport.h"

namespace hetnet::serving {

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

  int n = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(n, 1);
  for (int i = 1; i < n; ++i) loops_.push_back(std::make_unique<Loop>());
  DoAccept();
  for (int i = 0; i < n; ++i) {
    net::io_context& ioc = i == 0 ? ioc_ : loops_[i - 1]->ioc;
    threads_.emplace_back([this, &ioc] {
      while (true) {
        try {
          ioc.run();
          return;
        } catch (const std::exception& e) {
          std::cerr << "hetnet serve: " << options_.what << " I/O thread: " << e.what() << std::endl;
        }
      }
    });
  }
}

void HttpTransport::DoAccept() {
  const size_t i = next_loop_++ % (loops_.size() + 1);
  net::io_context& ioc = i == 0 ? ioc_ : loops_[i - 1]->ioc;
  acceptor_.async_accept(net::any_io_executor(ioc.get_executor()),
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
  for (auto& loop : loops_) loop->work.reset();
  {
    // Connections still waiting for the server hold a reference through their exchange; do not
    // wait for those beyond a moment.
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return connections_.empty(); });
    stopped_ = true;
  }
  ioc_.stop();
  for (auto& loop : loops_) loop->ioc.stop();
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
  t.request_memory = &server->request_memory();
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
