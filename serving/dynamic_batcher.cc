#include "serving/dynamic_batcher.h"

#include <algorithm>

namespace hetnet::serving {

DynamicBatcher::DynamicBatcher(BatcherOptions options, int num_workers, Execute execute, Reject reject)
    : options_(std::move(options)), execute_(std::move(execute)), reject_(std::move(reject)) {
  std::sort(options_.preferred_batch_sizes.begin(), options_.preferred_batch_sizes.end());
  levels_.resize(std::max<size_t>(1, options_.priority_levels));
  busy_.assign(static_cast<size_t>(std::max(1, num_workers)), 0);
  for (int w = 0; w < std::max(1, num_workers); ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

DynamicBatcher::~DynamicBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void DynamicBatcher::Enqueue(std::unique_ptr<QueuedRequest>& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) HN_THROW(kUnavailable, "model is being unloaded");
    if (options_.max_queue_size > 0 && depth_ >= options_.max_queue_size)
      HN_THROW(kUnavailable, "Exceeds maximum queue size");
    size_t level = std::min(request->level, levels_.size() - 1);
    levels_[level].push_back(std::move(request));
    ++depth_;
  }
  cv_.notify_one();
}

bool DynamicBatcher::TryExecuteNow(std::unique_ptr<QueuedRequest>& request) {
  int worker = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.max_batch_size != 0 || depth_ != 0 || stopping_) return false;
    for (size_t w = 0; w < busy_.size() && worker < 0; ++w)
      if (!busy_[w]) worker = static_cast<int>(w);
    if (worker < 0) return false;
    busy_[worker] = 1;
  }
  struct Free {  // however execute_ ends
    DynamicBatcher* self;
    int worker;
    ~Free() {
      bool queued;
      {
        std::lock_guard<std::mutex> lock(self->mu_);
        self->busy_[worker] = 0;
        queued = self->depth_ != 0 || self->stopping_;
      }
      // Requests queued meanwhile wait for this instance's worker. With none, waking it would cost
      // two context switches a request for nothing (13% of the server's samples at concurrency 1);
      // the next Enqueue wakes a worker.
      if (queued) self->cv_.notify_all();
    }
  } free{this, worker};
  Batch batch;
  batch.push_back(std::move(request));
  execute_(batch, worker);
  return true;
}

size_t DynamicBatcher::Depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return depth_;
}

int64_t DynamicBatcher::TargetSize(int64_t available) const {
  // The largest preferred size that can be formed, else max_batch_size.
  for (auto it = options_.preferred_batch_sizes.rbegin(); it != options_.preferred_batch_sizes.rend(); ++it)
    if (*it <= available) return *it;
  return options_.max_batch_size;
}

bool DynamicBatcher::TakeBatch(Batch* out, Clock::time_point* wake,
                               std::vector<std::unique_ptr<QueuedRequest>>* expired) {
  const auto now = Clock::now();
  *wake = Clock::time_point::max();
  // Expired requests leave the queue first.
  for (auto& q : levels_) {
    for (auto it = q.begin(); it != q.end();) {
      if ((*it)->deadline <= now && options_.reject_on_timeout) {
        expired->push_back(std::move(*it));
        it = q.erase(it);
        --depth_;
      } else {
        ++it;
      }
    }
  }
  auto level = std::find_if(levels_.begin(), levels_.end(), [](const auto& q) { return !q.empty(); });
  if (level == levels_.end()) return false;
  auto& q = *level;
  const auto& head = q.front();
  if (options_.max_batch_size == 0) {  // no batching: one request per execution
    out->push_back(std::move(q.front()));
    q.pop_front();
    --depth_;
    return true;
  }
  // Rows available for a batch with the head's shapes, in queue order across levels.
  int64_t rows = 0;
  for (auto& lq : levels_)
    for (auto& r : lq)
      if (r->shape_key == head->shape_key && rows + r->batch_size <= options_.max_batch_size) rows += r->batch_size;
  const int64_t target = TargetSize(rows);
  const bool preferred_hit = !options_.preferred_batch_sizes.empty() && rows == target;
  const auto send_by = head->enqueued + options_.max_queue_delay;
  if (rows < options_.max_batch_size && !preferred_hit && now < send_by && !stopping_) {
    *wake = send_by;
    return false;
  }
  int64_t taken = 0;
  const int64_t limit = preferred_hit ? target : options_.max_batch_size;
  const std::string key = head->shape_key;
  for (auto& lq : levels_) {
    for (auto it = lq.begin(); it != lq.end() && taken < limit;) {
      if ((*it)->shape_key == key && taken + (*it)->batch_size <= limit) {
        taken += (*it)->batch_size;
        out->push_back(std::move(*it));
        it = lq.erase(it);
        --depth_;
      } else {
        ++it;
      }
    }
  }
  return true;
}

void DynamicBatcher::WorkerLoop(int worker) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (busy_[worker]) {  // a caller runs on this instance (TryExecuteNow)
      cv_.wait(lock);
      continue;
    }
    Batch batch;
    std::vector<std::unique_ptr<QueuedRequest>> expired;
    Clock::time_point wake;
    const bool got = TakeBatch(&batch, &wake, &expired);
    if (!expired.empty() || got) {
      busy_[worker] = got;
      lock.unlock();
      for (auto& r : expired) reject_(std::move(r), Error(ErrorKind::kUnavailable, "Request timeout expired"));
      if (got) execute_(batch, worker);
      lock.lock();
      busy_[worker] = 0;
      continue;
    }
    if (stopping_ && depth_ == 0) return;
    // Wake for the batch deadline, the earliest queue timeout, or a new request.
    for (auto& q : levels_)
      for (auto& r : q) wake = std::min(wake, r->deadline);
    if (wake == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, wake);
    }
  }
}

}  // namespace hetnet::serving
