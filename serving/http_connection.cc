// One HTTP connection: reading a request (header, then body within the limits), dispatching it to
// the router, writing the answer that comes back from any thread, keep-alive and lingering close.
#include <algorithm>
#include <cstring>

#include "serving/http_transport.h"

namespace hetnet::serving {

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
  over_budget_ = 0;
  lease_.reset();
  direct_body_.reset();
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
  const auto& msg = parser_->get();
  head_ = HttpRequest();
  head_.method = std::string(msg.method_string());
  head_.target = std::string(msg.target());
  head_.headers.reserve(std::distance(msg.begin(), msg.end()));
  for (const auto& f : msg) head_.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  head_.body = std::make_shared<std::string>();
  if (auto refusal = t_->router()->Screen(head_)) return Refuse(std::move(*refusal));
  // Charged before the body is read: beast reserves a declared length at once.
  if (RequestMemoryBudget* budget = t_->options().request_memory) {
    const uint64_t declared = parser_->content_length().value_or(0);
    lease_ = budget->TryTake(declared);
    if (!lease_) return RefuseForMemory(declared);
  }
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
  if (const auto declared = parser_->content_length(); declared && !parser_->chunked()) {
    // Straight into the body, in reads as large as the socket gives: through the parser, beast reads
    // at most its buffer's free capacity per call (a few KiB), so a 16 MiB body took thousands of
    // reads and timer re-arms (140 MB/s on loopback). The length was checked in OnHeader.
    direct_body_ = std::make_shared<std::string>();
    direct_body_->resize(static_cast<size_t>(*declared));
    const size_t have = std::min<size_t>(buffer_.size(), direct_body_->size());
    net::buffer_copy(net::buffer(direct_body_->data(), have), buffer_.data());
    buffer_.consume(have);  // what follows the body (a pipelined request) stays in the buffer
    return net::async_read(stream_, net::buffer(direct_body_->data() + have, direct_body_->size() - have),
                           [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
  }
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

void Connection::OnBody(beast::error_code ec) {
  const size_t limit = t_->options().max_input_size;
  if (ec) {
    if (over_budget_ > 0) return RefuseForMemory(over_budget_);
    if (too_many_chunks_) {
      return Refuse(400, MakeString("request has more than ", kMaxChunks, " chunks"));
    }
    if (ec == http::error::body_limit) {  // a chunked body (a declared length is refused in OnHeader)
      return Refuse(400, MakeString("request JSON size exceeds the maximum allowed input size of ", limit,
                                    " bytes (the chunked body is longer). Use --http-max-input-size to increase the limit."));
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
  HttpRequest req = std::move(head_);
  req.body = direct_body_ ? std::move(direct_body_) : std::make_shared<std::string>(std::move(msg.body()));
  direct_body_.reset();
  req.memory = lease_;
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
      if (lease_ && !lease_->Grow(out->size())) return RefuseForMemory(out->size());
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

void Connection::RefuseForMemory(uint64_t bytes) {
  const RequestMemoryBudget& budget = *t_->options().request_memory;
  const uint64_t total = (lease_ ? lease_->held() : 0) + bytes;
  const std::string message = budget.RefusalMessage(total, "this request");
  if (budget.NeverFits(total)) return Refuse(400, message);
  auto r = HttpReply::Error(503, message);
  r.headers.emplace_back("Retry-After", "1");
  Refuse(std::move(r));
}

void Connection::OnWrite(beast::error_code ec) {
  out_ = HttpReply();  // releases the response memory (output tensors) now
  lease_.reset();
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


}  // namespace hetnet::serving
