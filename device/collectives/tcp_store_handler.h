// A store served over TCP by one of the ranks, for env:// rendezvous (MASTER_ADDR:MASTER_PORT;
// Gloo has no TCP store, PyTorch's c10d does). The handler with is_server (rank 0) runs the server
// (tcp_store_handler_server.h) in a thread of its process; every handler, the server's included,
// is a client over TCP (tcp_store_handler_protocol.h).
//
// Bounds: connecting retries until `timeout` (the server may start later) and then throws kIo
// naming host:port; every request and reply is bounded by `timeout`, and a Get/Wait by its own
// timeout plus a grace, so a dead or stopped server gives kIo, never a hang. A key that is not set
// in time gives kTimeout "Wait timeout for name(s): ...". Threads may share a handler: each
// request uses its own pooled connection. Destroying the server's handler stops the server; the
// other ranks' requests then fail with kIo.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/collectives/store_handler.h"

namespace hetnet {

class TCPStoreServer;

class TCPStoreHandler final : public StoreHandler {
 public:
  // port 0 with is_server: a free port (see port()). `prefix` namespaces the keys ("<prefix>/key");
  // GetNumKeys counts every key on the server, whatever its prefix.
  TCPStoreHandler(const std::string& host, int port, bool is_server,
                  std::chrono::milliseconds timeout = kDefaultTimeout, const std::string& prefix = "");
  ~TCPStoreHandler() override;

  void Set(const std::string& name, const std::string& data) override;
  std::string Get(const std::string& name, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  int64_t Add(const std::string& name, int64_t value) override;
  int64_t GetNumKeys() override;
  bool DeleteKey(const std::string& name) override;
  bool Check(const std::vector<std::string>& names) override;
  void Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  std::string Describe() const override;

  int port() const { return port_; }
  bool is_server() const { return server_ != nullptr; }

 private:
  // Sends one request payload and returns the reply payload (status byte first). `reply_wait`
  // bounds the wait for the reply (0: unbounded; a dead server still ends it).
  std::string Request(const std::string& payload, std::chrono::milliseconds reply_wait);
  int Connect();
  std::string Key(const std::string& name) const { return prefix_.empty() ? name : prefix_ + "/" + name; }
  std::chrono::milliseconds ReplyWait(std::chrono::milliseconds wait_timeout) const;

  std::string host_;
  int port_;
  std::chrono::milliseconds timeout_;
  std::string prefix_;
  std::unique_ptr<TCPStoreServer> server_;
  std::mutex mu_;
  std::vector<int> idle_;  // connected sockets not in use
  int pool_pid_;           // the process idle_ was opened by: a forked child must not share them
};

}  // namespace hetnet
