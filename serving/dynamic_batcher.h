// A bounded request queue per model version and the workers (one per model instance) that take
// batches from it: requests are combined along dim 0 up to max_batch_size, a preferred size is
// sent as soon as it can be formed, otherwise the oldest request waits at most max_queue_delay;
// requests whose non-batch shapes differ are never combined. Priority levels are served highest
// (1) first; queue timeouts reject (or delay) requests as Triton's ModelQueuePolicy says.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serving/infer_request.h"

namespace hetnet::serving {

using Clock = std::chrono::steady_clock;

struct QueuedRequest {
  std::unique_ptr<InferRequest> request;
  InferCallback done;
  int64_t batch_size = 1;  // rows this request adds
  std::string shape_key;   // non-batch dims of every input; only equal keys share a batch
  size_t level = 0;        // priority level index, 0 = highest
  Clock::time_point enqueued = Clock::now();
  Clock::time_point deadline = Clock::time_point::max();
};

struct BatcherOptions {
  int64_t max_batch_size = 0;  // 0: one request per execution
  std::vector<int64_t> preferred_batch_sizes;
  std::chrono::microseconds max_queue_delay{0};
  size_t max_queue_size = 0;  // 0: unbounded
  size_t priority_levels = 1;
  bool reject_on_timeout = true;  // timeout_action REJECT (else DELAY: keep waiting)
};

class DynamicBatcher {
 public:
  using Batch = std::vector<std::unique_ptr<QueuedRequest>>;
  // Runs one batch on worker `worker` (0..num_workers-1); must answer every request of the batch.
  using Execute = std::function<void(Batch&, int worker)>;
  // Answers a request the queue gives up on (timeout) with this error.
  using Reject = std::function<void(std::unique_ptr<QueuedRequest>, Error)>;

  DynamicBatcher(BatcherOptions options, int num_workers, Execute execute, Reject reject);
  ~DynamicBatcher();  // finishes everything queued, then joins the workers

  // Throws kUnavailable "Exceeds maximum queue size" when full (the request is left with the caller).
  void Enqueue(std::unique_ptr<QueuedRequest>& request);
  // Without batching (max_batch_size 0): executes `request` at once on the calling thread when
  // nothing is queued and an instance is idle (claimed for the run, so instance counts still bound
  // concurrency) and returns true; otherwise returns false and leaves `request` with the caller.
  // For short models, whose run costs less than the two thread hand-offs of a queued request.
  bool TryExecuteNow(std::unique_ptr<QueuedRequest>& request);
  size_t Depth() const;

 private:
  void WorkerLoop(int worker);
  // Under the lock: moves the next batch into `out`, or returns the time to wait until.
  bool TakeBatch(Batch* out, Clock::time_point* wake, std::vector<std::unique_ptr<QueuedRequest>>* expired);
  int64_t TargetSize(int64_t available) const;

  BatcherOptions options_;
  Execute execute_;
  Reject reject_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::deque<std::unique_ptr<QueuedRequest>>> levels_;
  size_t depth_ = 0;
  bool stopping_ = false;
  std::vector<char> busy_;  // per instance: executing (its worker, or a caller in TryExecuteNow)
  std::vector<std::thread> workers_;
};

}  // namespace hetnet::serving
