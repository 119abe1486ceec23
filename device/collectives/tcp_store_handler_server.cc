#include "device/collectives/tcp_store_handler_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/error.h"
#include "device/collectives/tcp_store_handler_protocol.h"

namespace hetnet {

using tcp_store::Command;
using tcp_store::Reader;
using tcp_store::Status;
using tcp_store::Writer;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMaxClients = 4096;  // more connections than ranks of any job: refused
constexpr size_t kMaxWaitKeys = 1 << 16;

void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

std::string StatusFrame(Status s) { return Writer().U8(static_cast<uint8_t>(s)).Frame(); }

std::string BadRequest(const std::string& why) {
  return Writer().U8(static_cast<uint8_t>(Status::kBadRequest)).Str(why).Frame();
}

}  // namespace

struct TCPStoreServer::Client {
  int fd = -1;
  std::string in, out;
  size_t out_pos = 0;
  // A parked GET or WAIT.
  bool waiting = false;
  bool wait_is_get = false;
  std::vector<std::string> wait_keys;
  bool has_deadline = false;
  Clock::time_point deadline;
};

TCPStoreServer::TCPStoreServer(const std::string& host, int port) {
  HN_ENFORCE(port >= 0 && port <= 65535, "TCP store: port ", port, " is out of range");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  const bool any = host.empty();
  const int rc = ::getaddrinfo(any ? nullptr : host.c_str(), port_text.c_str(), &hints, &res);
  HN_CHECK_KIND(kIo, rc == 0, "TCP store: cannot resolve ", host, ":", port, ": ", ::gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* a = res; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd_ = fd;
    } else {
      last_error = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(res);
  HN_CHECK_KIND(kIo, listen_fd_ >= 0, "TCP store: cannot listen on ", host, ":", port, ": ", last_error);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  SetNonBlocking(listen_fd_);
  if (::pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(listen_fd_);
    HN_THROW(kIo, "TCP store: pipe: ", std::strerror(errno));
  }
  owner_pid_ = ::getpid();
  thread_ = std::make_unique<std::thread>([this] { Loop(); });
}

TCPStoreServer::~TCPStoreServer() {
  if (::getpid() == owner_pid_) {
    const char b = 1;
    while (::write(wake_fds_[1], &b, 1) < 0 && errno == EINTR) {
    }
    thread_->join();
  } else {
    // The parent's thread: not ours to join or signal, and a joinable std::thread must not be destroyed.
    (void)thread_.release();
    // Nor is its state ours: the fork copied the maps as that thread left them, possibly mid-update
    // (ASan saw a Client's buffer freed twice here: the parent had been growing it at the fork).
    // Their copies are left behind, unread; empty maps take their place for the member destructors.
    new (&clients_) decltype(clients_)();
    new (&data_) decltype(data_)();
  }
  for (auto& kv : clients_) ::close(kv.first);
  ::close(listen_fd_);
  ::close(wake_fds_[0]);
  ::close(wake_fds_[1]);
}

void TCPStoreServer::Loop() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_fds_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    int timeout_ms = -1;
    const auto now = Clock::now();
    for (auto& kv : clients_) {
      Client& c = *kv.second;
      short events = 0;
      // One request at a time per connection: read the next only when the last is answered.
      if (!c.waiting && c.out_pos == c.out.size()) events |= POLLIN;
      if (c.out_pos < c.out.size()) events |= POLLOUT;
      fds.push_back({c.fd, events, 0});
      if (c.waiting && c.has_deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count() + 1;
        const int ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left, 1 << 30)));
        timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
      }
    }
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) return;  // cannot happen with valid fds; the handler's I/O then fails
    if (fds[0].revents) return;  // shutdown
    if (fds[1].revents & POLLIN) Accept();
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto it = clients_.find(fds[i].fd);
      if (it == clients_.end()) continue;
      Client* c = it->second.get();
      bool keep = !(fds[i].revents & (POLLERR | POLLNVAL));
      if (keep && (fds[i].revents & POLLOUT)) keep = WriteTo(c);
      if (keep && (fds[i].revents & (POLLIN | POLLHUP))) keep = ReadFrom(c);
      if (!keep) {
        ::close(c->fd);
        clients_.erase(it);
      }
    }
    ServeWaits(/*only_expired=*/true);
    // Requests a client sent before its last reply went out (pipelined) are read now.
    for (auto it = clients_.begin(); it != clients_.end();) {
      Client* c = it->second.get();
      if (c->in.size() >= 4 && !c->waiting && c->out_pos == c->out.size() && !ProcessFrames(c)) {
        ::close(c->fd);
        it = clients_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void TCPStoreServer::Accept() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection that died before we took it
    if (clients_.size() >= kMaxClients) {
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto c = std::make_unique<Client>();
    c->fd = fd;
    clients_[fd] = std::move(c);
  }
}

bool TCPStoreServer::ReadFrom(Client* c) {
  char buf[1 << 16];
  const ssize_t n = ::recv(c->fd, buf, sizeof(buf), 0);
  if (n == 0) return false;  // the peer closed
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  c->in.append(buf, static_cast<size_t>(n));
  return ProcessFrames(c);
}

bool TCPStoreServer::ProcessFrames(Client* c) {
  // Handle complete frames while the connection is free for the next request.
  while (!c->waiting && c->out_pos == c->out.size() && c->in.size() >= 4) {
    uint32_t len;
    std::memcpy(&len, c->in.data(), 4);
    if (len > tcp_store::kMaxFrame) return false;  // garbage or hostile: drop the sender
    if (c->in.size() < 4 + static_cast<size_t>(len)) break;
    const std::string payload = c->in.substr(4, len);
    c->in.erase(0, 4 + static_cast<size_t>(len));
    Handle(c, payload);
  }
  return true;
}

bool TCPStoreServer::WriteTo(Client* c) {
  while (c->out_pos < c->out.size()) {
    const ssize_t n = ::send(c->fd, c->out.data() + c->out_pos, c->out.size() - c->out_pos, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    c->out_pos += static_cast<size_t>(n);
  }
  c->out.clear();
  c->out_pos = 0;
  return true;
}

void TCPStoreServer::Reply(Client* c, const std::string& frame) {
  c->out += frame;
  WriteTo(c);  // usually all of it; the rest goes when the socket is writable (POLLOUT)
}

bool TCPStoreServer::AllSet(const Client& c) const {
  for (const auto& k : c.wait_keys)
    if (!data_.count(k)) return false;
  return true;
}

void TCPStoreServer::ServeWaits(bool only_expired) {
  const auto now = Clock::now();
  for (auto& kv : clients_) {
    Client& c = *kv.second;
    if (!c.waiting) continue;
    if (!only_expired && AllSet(c)) {
      c.waiting = false;
      Writer w;
      w.U8(static_cast<uint8_t>(Status::kOk));
      if (c.wait_is_get) w.Str(data_.at(c.wait_keys[0]));
      Reply(&c, w.Frame());
    } else if (c.has_deadline && now >= c.deadline) {
      c.waiting = false;
      Reply(&c, StatusFrame(Status::kTimeout));
    }
  }
}

void TCPStoreServer::Handle(Client* c, const std::string& payload) {
  Reader r(payload);
  const auto cmd = static_cast<Command>(r.U8());
  auto park = [&](std::vector<std::string> keys, bool is_get, int64_t timeout_ms) {
    c->wait_keys = std::move(keys);
    c->wait_is_get = is_get;
    c->has_deadline = timeout_ms > 0;
    c->deadline = Clock::now() + std::chrono::milliseconds(std::min<int64_t>(timeout_ms, int64_t(1) << 40));
    c->waiting = true;
    ServeWaits(false);  // already set: answered now
  };
  auto read_keys = [&](std::vector<std::string>* keys) {
    const uint32_t n = r.U32();
    if (!r.ok() || n > kMaxWaitKeys || n > r.remaining() / 4) return false;
    for (uint32_t i = 0; i < n && r.ok(); ++i) keys->push_back(r.Str());
    return r.ok();
  };
  switch (cmd) {
    case Command::kSet: {
      std::string key = r.Str(), value = r.Str();
      if (!r.ok() || !r.at_end()) break;
      auto it = data_.find(key);
      if (it != data_.end() && it->second != value) {
        Reply(c, StatusFrame(Status::kConflict));
        return;
      }
      data_[key] = std::move(value);
      Reply(c, StatusFrame(Status::kOk));
      ServeWaits(false);
      return;
    }
    case Command::kGet: {
      std::string key = r.Str();
      const int64_t timeout_ms = r.I64();
      if (!r.ok() || !r.at_end() || timeout_ms < 0) break;
      park({std::move(key)}, true, timeout_ms);
      return;
    }
    case Command::kAdd: {
      const std::string key = r.Str();
      const int64_t delta = r.I64();
      if (!r.ok() || !r.at_end()) break;
      int64_t value = 0;
      auto it = data_.find(key);
      if (it != data_.end()) {
        char* end = nullptr;
        errno = 0;
        value = std::strtoll(it->second.c_str(), &end, 10);
        if (it->second.empty() || errno != 0 || end != it->second.c_str() + it->second.size()) {
          Reply(c, BadRequest("key '" + key + "' does not hold an integer (Add on a key set with Set?)"));
          return;
        }
      }
      value = static_cast<int64_t>(static_cast<uint64_t>(value) + static_cast<uint64_t>(delta));
      data_[key] = std::to_string(value);
      Reply(c, Writer().U8(static_cast<uint8_t>(Status::kOk)).I64(value).Frame());
      ServeWaits(false);
      return;
    }
    case Command::kCheck: {
      std::vector<std::string> keys;
      if (!read_keys(&keys) || !r.at_end()) break;
      bool all = true;
      for (const auto& k : keys) all = all && data_.count(k);
      Reply(c, Writer().U8(static_cast<uint8_t>(Status::kOk)).U8(all ? 1 : 0).Frame());
      return;
    }
    case Command::kNumKeys:
      if (!r.at_end()) break;
      Reply(c, Writer().U8(static_cast<uint8_t>(Status::kOk)).I64(static_cast<int64_t>(data_.size())).Frame());
      return;
    case Command::kDelete: {
      const std::string key = r.Str();
      if (!r.ok() || !r.at_end()) break;
      const bool erased = data_.erase(key) > 0;
      Reply(c, Writer().U8(static_cast<uint8_t>(Status::kOk)).U8(erased ? 1 : 0).Frame());
      return;
    }
    case Command::kWait: {
      std::vector<std::string> keys;
      if (!read_keys(&keys)) break;
      const int64_t timeout_ms = r.I64();
      if (!r.ok() || !r.at_end() || timeout_ms < 0) break;
      park(std::move(keys), false, timeout_ms);
      return;
    }
  }
  Reply(c, BadRequest("malformed request (command " + std::to_string(static_cast<int>(cmd)) + ", " +
                      std::to_string(payload.size()) + " bytes)"));
}

}  // namespace hetnet
