// A store in a Redis server (Caffe2's RedisStoreHandler), over Gloo's gloo::rendezvous::RedisStore
// (Debian libgloo-dev is built with GLOO_USE_REDIS). Built only with Gloo (HETNET_WITH_GLOO).
// Keys are "<prefix><name>" as in Caffe2. Set, Get and Wait go through Gloo's store; Add (INCRBY),
// GetNumKeys (the keys under the prefix) and DeleteKey use its hiredis connection directly.
// Every Redis reply is bounded by `timeout` (hiredis socket timeout); the initial connect is
// hiredis's own blocking connect.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "device/collectives/store_handler.h"

namespace hetnet {

class GlooRedisStoreHandler final : public StoreHandler {
 public:
  // Throws kIo when the server cannot be reached.
  GlooRedisStoreHandler(const std::string& host, int port, const std::string& prefix = "",
                        std::chrono::milliseconds timeout = kDefaultTimeout);
  ~GlooRedisStoreHandler() override;

  void Set(const std::string& name, const std::string& data) override;
  std::string Get(const std::string& name, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  int64_t Add(const std::string& name, int64_t value) override;
  int64_t GetNumKeys() override;
  bool DeleteKey(const std::string& name) override;
  bool Check(const std::vector<std::string>& names) override;
  void Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  std::string Describe() const override;

 private:
  class Store;  // gloo::rendezvous::RedisStore with access to its hiredis context
  std::string Key(const std::string& name) const { return prefix_ + name; }
  // The connection of this process (a forked child opens its own; the parent's stays the parent's).
  Store& Connection();
  void Connect();

  std::string host_;
  int port_;
  std::string prefix_;
  std::mutex mu_;  // a hiredis context is not thread-safe
  std::chrono::milliseconds timeout_;
  int pid_ = 0;
  std::unique_ptr<Store> store_;
};

}  // namespace hetnet
