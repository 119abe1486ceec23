#include "device/cpu_thread_pool.h"

#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/intra_op_threads.h"

namespace hetnet {
namespace cpu_pool {

namespace {

// Indices are handed out in blocks (about four per slot): one shared counter update per block, not
// per index (a MaxPool of 1,280 small planes spent more on the counters than on the planes).
struct Job {
  const std::function<void(int64_t, int)>* f = nullptr;  // valid while blocks remain
  int64_t n = 0, grain = 1, blocks = 0;
  int max_slots = 1;
  std::atomic<int64_t> next{0};  // the next block to hand out
  std::atomic<int64_t> done{0};  // blocks finished
  std::atomic<int> slots{1};     // slot 0 is the caller's
};

void Work(Job* job, int slot) {
  for (;;) {
    const int64_t b = job->next.fetch_add(1, std::memory_order_relaxed);
    if (b >= job->blocks) return;
    const int64_t end = std::min(job->n, (b + 1) * job->grain);
    for (int64_t i = b * job->grain; i < end; ++i) (*job->f)(i, slot);
    job->done.fetch_add(1, std::memory_order_release);
  }
}

// Waits until done() or `yield_us` have passed: first spinning on the core for `busy_us` (a pause
// between checks), then giving it up between checks (sched_yield). A yield is a system call of about
// a microsecond, which each wait for a parallel part or for the next operator's job paid once more
// (LeNet at batch 1, 2 threads: 12% of the caller's samples in __schedule); the busy phase stays
// short so that a core shared with other processes is not held. True when done().
template <typename Done>
bool SpinWait(Done done, int busy_us, int yield_us) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    if (i % 64 != 0) {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
      continue;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    if (waited >= yield_us) return false;
    if (waited >= busy_us) std::this_thread::yield();
  }
}

// The caller's wait for parts that pool threads took: on the core this long, then yielding (a part
// runs a few to hundreds of microseconds; a pool thread descheduled mid-part can take a time slice).
constexpr int kCallerBusySpinUs = 20;

bool Open(const Job& job) {
  return job.next.load(std::memory_order_relaxed) < job.blocks &&
         job.slots.load(std::memory_order_relaxed) < job.max_slots;
}

// Threads are created on demand (the most helpers any call asked for, at most 255) and live for
// the process; jobs are shared, so a late thread holds its job alive and finds it finished.
class Pool {
 public:
  static Pool& Get() {
    static Pool* pool = [] {
      Pool* p = new Pool();  // never destroyed: its threads block on the condition forever
      // A fork (Python's multiprocessing) copies no pool thread: the child starts with none, and the
      // lock is held across the fork so that no thread of the parent owns the child's copy.
      pthread_atfork([] { Get().mu_.lock(); }, [] { Get().mu_.unlock(); },
                     [] {
                       Pool& c = Get();
                       c.threads_ = 0;
                       c.jobs_.clear();
                       c.mu_.unlock();
                     });
      return p;
    }();
    return *pool;
  }

  void Offer(const std::shared_ptr<Job>& job, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(job);
      offered_.fetch_add(1, std::memory_order_release);
      const int want = std::min(helpers, 255);
      while (static_cast<int>(threads_) < want) {
        std::thread(&Pool::Loop, this).detach();
        ++threads_;
      }
    }
    cv_.notify_all();
  }

  void Retire(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), job), jobs_.end());
  }

 private:
  void Loop() {
    ScopedIntraOpThreads one(1);  // Eigen and nested ParallelFor calls inside f stay on this thread
    for (;;) {
      // A net's consecutive operators offer jobs microseconds apart: stay awake for a while before
      // sleeping, so the next job does not wait for a futex wake-up.
      const uint64_t seen = offered_.load(std::memory_order_acquire);
      SpinWait([&] { return offered_.load(std::memory_order_acquire) != seen; }, kBusySpinUs, kSpinUs);
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] {
          for (const auto& j : jobs_)
            if (Open(*j)) return (job = j), true;
          return false;
        });
      }
      const int slot = job->slots.fetch_add(1, std::memory_order_relaxed);
      if (slot < job->max_slots) Work(job.get(), slot);
    }
  }

  static constexpr int kBusySpinUs = 10, kSpinUs = 200;
  std::atomic<uint64_t> offered_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Job>> jobs_;
  size_t threads_ = 0;
};

}  // namespace

void Run(int64_t n, int workers, const std::function<void(int64_t, int)>& f) {
  if (n <= 0) return;
  if (workers <= 1 || n == 1) {  // one thread: f keeps the caller's team (Eigen may use it)
    for (int64_t i = 0; i < n; ++i) f(i, 0);
    return;
  }
  auto job = std::make_shared<Job>();
  job->f = &f;
  job->n = n;
  job->grain = std::max<int64_t>(1, n / (4 * static_cast<int64_t>(workers)));
  job->blocks = (n + job->grain - 1) / job->grain;
  job->max_slots = workers;
  Pool& pool = Pool::Get();
  pool.Offer(job, workers - 1);
  {
    ScopedIntraOpThreads one(1);
    Work(job.get(), 0);
  }
  // Chunks that pool threads took are running now: wait for them (never for a thread that took none).
  SpinWait([&] { return job->done.load(std::memory_order_acquire) >= job->blocks; }, kCallerBusySpinUs, INT_MAX);
  pool.Retire(job);
}

}  // namespace cpu_pool
}  // namespace hetnet
