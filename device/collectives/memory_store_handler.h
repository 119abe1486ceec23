// A StoreHandler in process memory (Gloo's HashStore): ranks that are threads of one process
// rendezvous through it (tests, single-process multi-rank worlds). Same contract as the other
// stores except Set, which overwrites.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "device/collectives/store_handler.h"

namespace hetnet {

class MemoryStoreHandler final : public StoreHandler {
 public:
  void Set(const std::string& name, const std::string& data) override;
  std::string Get(const std::string& name, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  int64_t Add(const std::string& name, int64_t value) override;
  int64_t GetNumKeys() override;
  bool DeleteKey(const std::string& name) override;
  bool Check(const std::vector<std::string>& names) override;
  void Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  std::string Describe() const override { return "in-process memory store"; }

 private:
  bool AllSetLocked(const std::vector<std::string>& names) const;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> kv_;
};

}  // namespace hetnet
