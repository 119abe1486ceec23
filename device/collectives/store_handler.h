// A key-value store that processes rendezvous through (Caffe2's StoreHandler, distributed-facts
// §1.5): rank 0 publishes, the others wait. Implementations: FileStoreHandler (a shared
// directory), TCPStoreHandler (our server on MASTER_ADDR:MASTER_PORT; Gloo has none) and
// RedisStoreHandler (Gloo's RedisStore). A blob holding a store holds a StoreHandlerPtr.
//
// Errors: a wait past its deadline throws hetnet::Error kTimeout "Wait timeout for name(s): ...";
// an unreachable store throws kIo. Nothing blocks longer than the timeout it was given.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hetnet {

class StoreHandler {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{30000};
  static constexpr std::chrono::milliseconds kNoTimeout{0};  // wait forever (Caffe2's kNoTimeout)

  virtual ~StoreHandler() = default;
  // Set-once: setting an existing key to different data is an error (kInvalidArgument).
  virtual void Set(const std::string& name, const std::string& data) = 0;
  // Waits for the key, then returns its data.
  virtual std::string Get(const std::string& name, std::chrono::milliseconds timeout = kDefaultTimeout) = 0;
  // Atomically adds value to the integer under name (0 when absent); returns the new value.
  virtual int64_t Add(const std::string& name, int64_t value) = 0;
  virtual int64_t GetNumKeys() = 0;
  virtual bool DeleteKey(const std::string& name) = 0;
  // True when every name is set.
  virtual bool Check(const std::vector<std::string>& names) = 0;
  virtual void Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout = kDefaultTimeout) = 0;
  // "file store /tmp/x (prefix 'run1')": for error messages.
  virtual std::string Describe() const = 0;
};

using StoreHandlerPtr = std::shared_ptr<StoreHandler>;

// The text of every store's wait timeout (Caffe2's, which scripts match on), then where and how long.
inline std::string WaitTimeoutMessage(const std::vector<std::string>& names, const StoreHandler& store,
                                      std::chrono::milliseconds timeout) {
  std::string text = "Wait timeout for name(s):";
  for (const auto& n : names) text += " " + n;
  return text + " (" + store.Describe() + ", waited " + std::to_string(timeout.count()) + " ms)";
}

}  // namespace hetnet
