// The thread that runs a front end's repository requests (load, unload, index), one at a time and
// in order: loads are serialized by the registry anyway, and a load may take seconds. At most
// `capacity` requests wait or run; more are refused at once (UNAVAILABLE / 503, retry later).
// Before it, gRPC started a thread per load request: 300 concurrent loads held 315 threads for
// 36 s, and a client sending 100,000 would have exhausted the process's threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace hetnet::serving {

class RepositoryWorker {
 public:
  static constexpr size_t kDefaultCapacity = 64;
  explicit RepositoryWorker(size_t capacity = kDefaultCapacity);
  ~RepositoryWorker();  // Join()
  RepositoryWorker(const RepositoryWorker&) = delete;
  RepositoryWorker& operator=(const RepositoryWorker&) = delete;

  // Queues `job`; false (nothing queued) when `capacity` jobs are waiting or running, or after Join.
  bool TryPost(std::function<void()> job);
  // The refusal text for a false TryPost.
  std::string BusyMessage() const;
  // Runs every job already posted, then stops the thread; later posts are refused. Idempotent.
  void Join();

 private:
  void Loop();

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetnet::serving
