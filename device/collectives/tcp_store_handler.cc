#include "device/collectives/tcp_store_handler.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "device/collectives/tcp_store_handler_protocol.h"
#include "device/collectives/tcp_store_handler_server.h"

namespace hetnet {

using tcp_store::Command;
using tcp_store::Reader;
using tcp_store::Status;
using tcp_store::Writer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kMaxGrace{10000};  // extra wait for a Get/Wait reply after its own timeout

// A deadline, or none (Clock::time_point::max()) for a zero timeout.
Clock::time_point DeadlineAfter(milliseconds t) {
  return t == StoreHandler::kNoTimeout ? Clock::time_point::max() : Clock::now() + t;
}

// Polls fd for `events` until the deadline; false on timeout.
bool WaitFd(int fd, short events, Clock::time_point deadline, short* revents) {
  for (;;) {
    int ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n > 0) {
      *revents = p.revents;
      return true;
    }
  }
}

// Empty on success, else why it failed.
std::string SendAll(int fd, const std::string& data, Clock::time_point deadline) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return std::string("send failed: ") + std::strerror(errno);
    short rev = 0;
    if (!WaitFd(fd, POLLOUT, deadline, &rev)) return "send timed out";
  }
  return "";
}

std::string RecvExact(int fd, size_t size, Clock::time_point deadline, std::string* out) {
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd, &(*out)[done], size - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return "the server closed the connection (did the serving rank exit?)";
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return std::string("receive failed: ") + std::strerror(errno);
    short rev = 0;
    if (!WaitFd(fd, POLLIN, deadline, &rev)) return "no reply in time (is the server stopped?)";
  }
  return "";
}

Writer RequestOf(Command c) { return std::move(Writer().U8(static_cast<uint8_t>(c))); }

}  // namespace

TCPStoreHandler::TCPStoreHandler(const std::string& host, int port, bool is_server, milliseconds timeout,
                                 const std::string& prefix)
    : host_(host.empty() ? "127.0.0.1" : host), port_(port), timeout_(timeout), prefix_(prefix), pool_pid_(::getpid()) {
  HN_ENFORCE(port >= 0 && port <= 65535, "TCP store: port ", port, " is out of range");
  HN_ENFORCE(is_server || port > 0, "TCP store: clients need the server's port (got 0)");
  HN_ENFORCE(timeout.count() >= 0, "TCP store: timeout must be >= 0 ms");
  if (is_server) {
    server_ = std::make_unique<TCPStoreServer>(host, port);
    port_ = server_->port();
  }
}

TCPStoreHandler::~TCPStoreHandler() {
  for (int fd : idle_) ::close(fd);
  server_.reset();
}

std::string TCPStoreHandler::Describe() const {
  std::string d = "TCP store " + host_ + ":" + std::to_string(port_);
  if (server_) d += " (served here)";
  if (!prefix_.empty()) d += " (prefix '" + prefix_ + "')";
  return d;
}

int TCPStoreHandler::Connect() {
  const auto deadline = DeadlineAfter(timeout_);
  std::string last = "no address";
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string port_text = std::to_string(port_);
    const int rc = ::getaddrinfo(host_.c_str(), port_text.c_str(), &hints, &res);
    if (rc != 0) last = std::string("cannot resolve: ") + ::gai_strerror(rc);
    for (addrinfo* a = rc == 0 ? res : nullptr; a; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int err = 0;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
          short rev = 0;
          // One attempt waits at most a second, so a retry sees a server that started meanwhile.
          const auto attempt = std::min(deadline, Clock::now() + milliseconds(1000));
          socklen_t len = sizeof(err);
          if (!WaitFd(fd, POLLOUT, attempt, &rev)) err = ETIMEDOUT;
          else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        }
      }
      if (err == 0) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        ::freeaddrinfo(res);
        return fd;
      }
      last = std::strerror(err);
      ::close(fd);
    }
    if (res) ::freeaddrinfo(res);
    if (Clock::now() >= deadline)
      HN_THROW(kIo, "cannot connect to ", Describe(), " within ", timeout_.count(), " ms: ", last);
    std::this_thread::sleep_for(milliseconds(20));
  }
}

std::string TCPStoreHandler::Request(const std::string& payload, milliseconds reply_wait) {
  HN_ENFORCE(payload.size() <= tcp_store::kMaxFrame, Describe(), ": a value of ", payload.size(),
             " bytes is over the store's limit of ", tcp_store::kMaxFrame, " bytes");
  int fd = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pool_pid_ != ::getpid()) {  // forked: the parent's connections would interleave with ours
      for (int old : idle_) ::close(old);
      idle_.clear();
      pool_pid_ = ::getpid();
    }
    if (!idle_.empty()) {
      fd = idle_.back();
      idle_.pop_back();
    }
  }
  if (fd < 0) fd = Connect();
  std::string frame;
  frame.reserve(payload.size() + 4);
  uint32_t n = static_cast<uint32_t>(payload.size());
  frame.append(reinterpret_cast<const char*>(&n), 4);
  frame += payload;
  std::string why = SendAll(fd, frame, DeadlineAfter(timeout_));
  std::string header, reply;
  if (why.empty()) {
    const auto deadline = DeadlineAfter(reply_wait);
    why = RecvExact(fd, 4, deadline, &header);
    if (why.empty()) {
      uint32_t len;
      std::memcpy(&len, header.data(), 4);
      why = len == 0 || len > tcp_store::kMaxFrame ? "malformed reply" : RecvExact(fd, len, deadline, &reply);
    }
  }
  if (!why.empty()) {
    ::close(fd);  // its state is unknown: a late reply must not answer the next request
    HN_THROW(kIo, Describe(), ": ", why);
  }
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(fd);
  return reply;
}

milliseconds TCPStoreHandler::ReplyWait(milliseconds wait_timeout) const {
  if (wait_timeout == kNoTimeout) return kNoTimeout;
  const milliseconds grace = timeout_ == kNoTimeout ? kMaxGrace : std::min(timeout_, kMaxGrace);
  return wait_timeout + grace;
}

namespace {

// Reads the status byte; throws for anything but kOk (kTimeout is handled by the callers).
Status StatusOf(Reader* r, const std::string& what, const std::string& store) {
  const auto s = static_cast<Status>(r->U8());
  if (s == Status::kOk || s == Status::kTimeout) return s;
  if (s == Status::kConflict)
    HN_THROW(kInvalidArgument, store, ": key '", what,
             "' is already set to different data; keys are set once (a prefix or run ID reused from an earlier run?)");
  if (s == Status::kBadRequest) HN_THROW(kInvalidArgument, store, ": ", r->Str(), " (", what, ")");
  HN_THROW(kIo, store, ": unknown reply status ", static_cast<int>(s));
}

}  // namespace

void TCPStoreHandler::Set(const std::string& name, const std::string& data) {
  const std::string reply = Request(RequestOf(Command::kSet).Str(Key(name)).Str(data).payload(), timeout_);
  Reader r(reply);
  StatusOf(&r, name, Describe());
}

std::string TCPStoreHandler::Get(const std::string& name, milliseconds timeout) {
  const std::string reply =
      Request(RequestOf(Command::kGet).Str(Key(name)).I64(timeout.count()).payload(), ReplyWait(timeout));
  Reader r(reply);
  if (StatusOf(&r, name, Describe()) == Status::kTimeout)
    HN_THROW(kTimeout, WaitTimeoutMessage({name}, *this, timeout));
  std::string value = r.Str();
  HN_CHECK_KIND(kIo, r.ok(), Describe(), ": malformed reply to Get('", name, "')");
  return value;
}

int64_t TCPStoreHandler::Add(const std::string& name, int64_t value) {
  const std::string reply = Request(RequestOf(Command::kAdd).Str(Key(name)).I64(value).payload(), timeout_);
  Reader r(reply);
  StatusOf(&r, name, Describe());
  const int64_t result = r.I64();
  HN_CHECK_KIND(kIo, r.ok(), Describe(), ": malformed reply to Add('", name, "')");
  return result;
}

int64_t TCPStoreHandler::GetNumKeys() {
  const std::string reply = Request(RequestOf(Command::kNumKeys).payload(), timeout_);
  Reader r(reply);
  StatusOf(&r, "", Describe());
  const int64_t n = r.I64();
  HN_CHECK_KIND(kIo, r.ok(), Describe(), ": malformed reply to GetNumKeys");
  return n;
}

bool TCPStoreHandler::DeleteKey(const std::string& name) {
  const std::string reply = Request(RequestOf(Command::kDelete).Str(Key(name)).payload(), timeout_);
  Reader r(reply);
  StatusOf(&r, name, Describe());
  return r.U8() != 0;
}

bool TCPStoreHandler::Check(const std::vector<std::string>& names) {
  Writer w = RequestOf(Command::kCheck);
  w.U32(static_cast<uint32_t>(names.size()));
  for (const auto& n : names) w.Str(Key(n));
  const std::string reply = Request(w.payload(), timeout_);
  Reader r(reply);
  StatusOf(&r, "check", Describe());
  return r.U8() != 0;
}

void TCPStoreHandler::Wait(const std::vector<std::string>& names, milliseconds timeout) {
  Writer w = RequestOf(Command::kWait);
  w.U32(static_cast<uint32_t>(names.size()));
  for (const auto& n : names) w.Str(Key(n));
  w.I64(timeout.count());
  const std::string reply = Request(w.payload(), ReplyWait(timeout));
  Reader r(reply);
  if (StatusOf(&r, "wait", Describe()) == Status::kTimeout)
    HN_THROW(kTimeout, WaitTimeoutMessage(names, *this, timeout));
}

}  // namespace hetnet
