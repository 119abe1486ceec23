// Raw bytes from a client to a live TCP store server (device/collectives/tcp_store_handler_server):
// the rendezvous port of every rank 0 faces the network. Each input is sent on a fresh loopback
// connection, the reply is drained for a moment, then the connection closes. The server must
// survive every input, and answer a well-formed request afterwards.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "device/collectives/tcp_store_handler.h"
#include "device/collectives/tcp_store_handler_server.h"
#include "fuzz/fuzz_common.h"

namespace {

hetnet::TCPStoreServer& Server() {
  static auto* server = new hetnet::TCPStoreServer("127.0.0.1", 0);
  return *server;
}

void SendAndDrain(int port, const uint8_t* data, size_t size) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    size_t sent = 0;
    while (sent < size) {
      const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    char buf[4096];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 2) > 0 && ::recv(fd, buf, sizeof buf, 0) > 0) {
    }
  }
  ::close(fd);
}

}  // namespace

static void Run(const uint8_t* data, size_t size) {
  const int port = Server().port();
  SendAndDrain(port, data, size);
  // The server still answers a real client (with a short deadline: a hang is a finding).
  static int round = 0;
  if (++round % 64 == 0) {
    try {
      hetnet::TCPStoreHandler client("127.0.0.1", port, /*is_server=*/false, std::chrono::milliseconds(2000));
      client.Add("fuzz_alive", 1);
    } catch (const hetnet::Error& e) {
      __builtin_trap();  // the server stopped answering: a finding
    }
  }
}

HETNET_FUZZ_ENTRY(Run)
