// DynamicBatcher::TryExecuteNow: unbatched requests run on the caller's thread only when nothing is
// queued and an instance is idle, and instance counts still bound concurrency.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "serving/dynamic_batcher.h"

using namespace hetnet;
using namespace hetnet::serving;

namespace {

std::unique_ptr<QueuedRequest> Request() {
  auto q = std::make_unique<QueuedRequest>();
  q->request = std::make_unique<InferRequest>();
  q->done = [](InferResult) {};
  return q;
}

// An execute function that blocks while `hold` is set and records where and how often it ran.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  bool hold = false;
  int running = 0, max_running = 0, runs = 0;
  std::thread::id last_thread;
  void Run(DynamicBatcher::Batch& batch) {
    std::unique_lock<std::mutex> lock(mu);
    max_running = std::max(max_running, ++running);
    last_thread = std::this_thread::get_id();
    cv.notify_all();
    cv.wait(lock, [&] { return !hold; });
    --running;
    runs += static_cast<int>(batch.size());
    cv.notify_all();
  }
  void WaitRunning(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return running == n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    hold = false;
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("an unbatched request runs on the caller's thread when an instance is idle", "[serving]") {
  Recorder rec;
  DynamicBatcher b(BatcherOptions{}, 1, [&](DynamicBatcher::Batch& batch, int) { rec.Run(batch); },
                   [](std::unique_ptr<QueuedRequest>, Error) {});
  auto q = Request();
  REQUIRE(b.TryExecuteNow(q));
  CHECK(q == nullptr);
  CHECK(rec.runs == 1);
  CHECK(rec.last_thread == std::this_thread::get_id());
}

TEST_CASE("TryExecuteNow declines while the only instance is busy, and the queue keeps order", "[serving]") {
  Recorder rec;
  rec.hold = true;
  DynamicBatcher b(BatcherOptions{}, 1, [&](DynamicBatcher::Batch& batch, int) { rec.Run(batch); },
                   [](std::unique_ptr<QueuedRequest>, Error) {});
  std::thread caller([&] {
    auto q = Request();
    CHECK(b.TryExecuteNow(q));  // claims the instance and blocks in execute
  });
  rec.WaitRunning(1);
  auto second = Request();
  CHECK_FALSE(b.TryExecuteNow(second));  // the instance is busy: left with the caller
  REQUIRE(second != nullptr);
  b.Enqueue(second);  // queued for the instance's worker, which must wait for the caller's run
  auto third = Request();
  CHECK_FALSE(b.TryExecuteNow(third));  // something is queued: never overtakes it
  rec.Release();
  caller.join();
  while (b.Depth() > 0) std::this_thread::yield();
  {
    std::unique_lock<std::mutex> lock(rec.mu);
    rec.cv.wait(lock, [&] { return rec.runs == 2; });
  }
  CHECK(rec.max_running == 1);  // one instance: never two runs at once
}

TEST_CASE("TryExecuteNow never runs batched models inline", "[serving]") {
  Recorder rec;
  BatcherOptions o;
  o.max_batch_size = 8;
  DynamicBatcher b(o, 1, [&](DynamicBatcher::Batch& batch, int) { rec.Run(batch); },
                   [](std::unique_ptr<QueuedRequest>, Error) {});
  auto q = Request();
  CHECK_FALSE(b.TryExecuteNow(q));
  CHECK(q != nullptr);
  CHECK(rec.runs == 0);
}
