#include "device/collectives/memory_store_handler.h"

#include "core/error.h"

namespace hetnet {

void MemoryStoreHandler::Set(const std::string& name, const std::string& data) {
  std::lock_guard<std::mutex> lock(mu_);
  kv_[name] = data;
  cv_.notify_all();
}

std::string MemoryStoreHandler::Get(const std::string& name, std::chrono::milliseconds timeout) {
  Wait({name}, timeout);
  std::lock_guard<std::mutex> lock(mu_);
  return kv_.at(name);
}

int64_t MemoryStoreHandler::Add(const std::string& name, int64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kv_.find(name);
  const int64_t v = (it == kv_.end() ? 0 : std::stoll(it->second)) + value;
  kv_[name] = std::to_string(v);
  cv_.notify_all();
  return v;
}

int64_t MemoryStoreHandler::GetNumKeys() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(kv_.size());
}

bool MemoryStoreHandler::DeleteKey(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  return kv_.erase(name) > 0;
}

bool MemoryStoreHandler::AllSetLocked(const std::vector<std::string>& names) const {
  for (const auto& n : names)
    if (!kv_.count(n)) return false;
  return true;
}

bool MemoryStoreHandler::Check(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  return AllSetLocked(names);
}

void MemoryStoreHandler::Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto all = [&] { return AllSetLocked(names); };
  if (timeout == kNoTimeout) {
    cv_.wait(lock, all);
  } else if (!cv_.wait_for(lock, timeout, all)) {
    HN_THROW(kTimeout, WaitTimeoutMessage(names, *this, timeout));
  }
}

}  // namespace hetnet
