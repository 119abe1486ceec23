// The parallel executor (net types "dag" and "async_scheduling"; Caffe2's other parallel types map
// here): operators form a dependency graph from the blobs they read and write (core/dag_graph.h), and
// ready operators run on a pool of `num_workers` threads. A worker that finishes an op runs one of
// its newly ready children itself, so chains stay on one thread (and one CUDA stream).
//
// GPU: CUDA streams are per thread, so each worker queues on its own stream per GPU, and copy ops
// get their own stream per direction (argument "stream_id", see operators/copy_op.cu). After a GPU
// op its worker records an event; a GPU child on another stream waits for it on the device. A CPU
// child whose GPU parents have not finished yet is parked rather than run: its worker takes other
// ready work, and a worker blocks on a parked op's events only when nothing else is ready (so a
// device-to-host copy never holds a worker while CPU work of the next micro-batch waits).
// Run() returns once every device has finished the run's work.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "core/checked_size.h"
#include "core/intra_op_threads.h"
#include "core/net.h"
#include "core/profiler.h"
#include "core/workspace.h"
#include "core/workspace_memory.h"
#include "core/dag_graph.h"
#include "core/device_events.h"
#include "net_executors/op_creation.h"

namespace hetnet {

class DagNet final : public NetBase, public ProfilingExecutor {
 public:
  DagNet(const caffe2::NetDef& def, Workspace* ws) {
    def_ = def;
    account_ = WorkspaceMemoryAccount(ws);
    ops_ = CreateNetOperators(def_, ws, /*copy_streams=*/true);
    graph_ = BuildDependencyGraph(def_);
    const int n = static_cast<int>(ops_.size());
    gpu_.assign(n, false);
    done_events_.resize(n);
    streams_.assign(n, nullptr);
    ran_.assign(n, 0);
    for (int i = 0; i < n; ++i) gpu_[i] = !ops_[i]->device().is_cpu();
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    num_workers_ = def_.num_workers() > 0 ? def_.num_workers() : std::max(2, std::min(hw, 8));
    try {
      CheckLimit(Limit::kMaxDagWorkers, num_workers_, "num_workers");
    } catch (Error& e) {
      throw e.AddContext("while creating net '" + def_.name() + "' (type '" + def_.type() + "')");
    }
  }

  ~DagNet() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void Run() override {
    std::lock_guard<std::mutex> one_run_at_a_time(run_mu_);
    RunOnce(nullptr);
  }

  RunProfile RunProfiled() override {
    std::lock_guard<std::mutex> one_run_at_a_time(run_mu_);
    if (!timers_) timers_ = std::make_unique<OpTimerSet>(*this);
    timers_->StartRun();
    RunOnce(timers_.get());
    return timers_->Resolve();
  }

  const std::vector<std::unique_ptr<OperatorBase>>& operators() const override { return ops_; }
  int num_workers() const { return num_workers_; }

 private:
  void RunOnce(OpTimerSet* timers) {
    const int n = static_cast<int>(ops_.size());
    if (n == 0) return;
    StartWorkers();
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.resize(n);
      for (int i = 0; i < n; ++i) pending_[i] = static_cast<int>(graph_.parents[i].size());
      std::fill(ran_.begin(), ran_.end(), 0);
      ready_.assign(graph_.roots.begin(), graph_.roots.end());
      parked_.clear();
      remaining_ = n;
      in_flight_ = 0;
      error_ = nullptr;
      timers_active_ = timers;
    }
    work_cv_.notify_all();
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return remaining_ == 0 || (error_ && in_flight_ == 0); });
      ready_.clear();  // after an error: ops not yet started never start
      parked_.clear();
      error = error_;
      timers_active_ = nullptr;
    }
    // Every op that queued GPU work is waited for, also after an error: the net must be idle (and
    // runnable again) when Run returns.
    for (int i = 0; i < n; ++i) {
      if (!gpu_[i] || !ran_[i] || !done_events_[i].handle()) continue;
      try {
        GetDeviceEvents()->HostWait(done_events_[i].handle());
      } catch (...) {
        if (!error) error = CaptureWithContext(i);
      }
    }
    if (error) std::rethrow_exception(error);
  }

  void StartWorkers() {
    if (!workers_.empty()) return;
    try {
      for (int w = 0; w < num_workers_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
    } catch (const std::system_error& e) {
      // The system gave fewer threads than asked: run with those, or fail naming the net.
      if (workers_.empty())
        HN_THROW(kRuntime, "net '", def_.name(), "': cannot start its DAG worker threads (", e.what(), ")");
    }
  }

  void WorkerLoop(int worker) {
    // Each worker's OpenMP team (Eigen GEMM, oneDNN) gets its share of the cores: num_workers full
    // teams would oversubscribe them, and libgomp's spin-waiting collapses throughput when they do.
    ScopedIntraOpThreads team_size(IntraOpBudget(num_workers_));
    const std::string thread_lane = "worker " + std::to_string(worker);
    for (;;) {
      int op = -1;
      bool may_block = false;  // a parked op, taken because nothing else is ready
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return shutdown_ || ((!ready_.empty() || !parked_.empty()) && !error_); });
        if (shutdown_) return;
        std::deque<int>& from = ready_.empty() ? parked_ : ready_;
        may_block = ready_.empty();
        op = from.front();
        from.pop_front();
        ++in_flight_;
      }
      while (op >= 0) {
        op = RunAndRelease(op, thread_lane, may_block);
        may_block = false;
      }
    }
  }

  // A CPU op whose GPU parents are still running on their devices (checked without blocking).
  bool WaitsForDevice(int i) {
    if (gpu_[i]) return false;
    for (int p : graph_.parents[i])
      if (gpu_[p] && done_events_[p].handle() && !GetDeviceEvents()->Query(done_events_[p].handle())) return true;
    return false;
  }

  // Runs op, then (under the lock) releases its children; returns a child to run next or -1. Unless
  // may_block, a CPU op that would wait for a device is parked instead and -1 returned.
  int RunAndRelease(int op, const std::string& thread_lane, bool may_block) {
    bool park = false;
    try {
      park = !may_block && WaitsForDevice(op);
    } catch (...) {
      park = false;  // RunOp's HostWait reports the device error with the op's context
    }
    if (park) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        --in_flight_;
        parked_.push_back(op);
      }
      work_cv_.notify_one();
      return -1;
    }
    std::exception_ptr failure;
    try {
      RunOp(op, thread_lane);
    } catch (...) {
      failure = CaptureWithContext(op);
    }
    int next = -1;
    bool more_ready = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
      --remaining_;
      if (failure && !error_) error_ = failure;
      if (!error_) {
        for (int c : graph_.children[op]) {
          if (--pending_[c] > 0) continue;
          if (next < 0) {
            next = c;
          } else {
            ready_.push_back(c);
            more_ready = true;
          }
        }
      }
      if (next >= 0) ++in_flight_;
      if (remaining_ == 0 || (error_ && in_flight_ == 0)) done_cv_.notify_all();
    }
    if (more_ready) work_cv_.notify_all();
    return next;
  }

  void RunOp(int i, const std::string& thread_lane) {
    OperatorBase* op = ops_[i].get();
    DeviceEvents* events = gpu_[i] ? GetDeviceEvents() : nullptr;
    StreamHandle stream = events ? events->CurrentStream(op->context()) : nullptr;
    for (int p : graph_.parents[i]) {
      if (!gpu_[p]) continue;  // a CPU parent finished on the host before this op became ready
      if (!events) {
        GetDeviceEvents()->HostWait(done_events_[p].handle());  // CPU reader of GPU work
      } else if (streams_[p] != stream) {
        events->StreamWait(stream, done_events_[p].handle());
      }
    }
    OpTimerSet* timers = timers_active_;
    WorkspaceMemoryScope charge_to(account_.get());  // tensors allocated here count for the workspace
    ran_[i] = 1;
    if (timers) timers->Begin(i, op);
    if (events) streams_[i] = stream;
    try {
      op->Run();
    } catch (...) {
      if (events) RecordDoneNoThrow(i, stream);  // so Run can wait for what the op did queue
      throw;
    }
    if (events) events->Record(done_events_[i].Get(op->device().id, false), stream, op->device().id);
    if (timers) timers->End(i, op, OpLane(thread_lane, op, true));
  }

  void RecordDoneNoThrow(int i, StreamHandle stream) {
    try {
      GetDeviceEvents()->Record(done_events_[i].Get(ops_[i]->device().id, false), stream, ops_[i]->device().id);
    } catch (...) {
      // The op's own error is the one reported.
    }
  }

  std::exception_ptr CaptureWithContext(int op) {
    try {
      RethrowWithContext(OperatorRunContext(def_, op, *ops_[op]));
    } catch (...) {
      return std::current_exception();
    }
  }

  std::vector<std::unique_ptr<OperatorBase>> ops_;
  std::shared_ptr<MemoryAccount> account_;  // the workspace's (total-workspace-bytes cap)
  DagGraph graph_;
  std::vector<bool> gpu_;
  std::vector<DeviceEvent> done_events_;  // recorded after each GPU op on its stream
  std::vector<StreamHandle> streams_;     // stream each GPU op last ran on
  std::vector<char> ran_;                 // op started in this run (its GPU work must be waited for)
  int num_workers_ = 1;
  std::unique_ptr<OpTimerSet> timers_;

  std::mutex run_mu_;  // one Run (or RunProfiled) at a time per net
  std::mutex mu_;      // guards the scheduling state below
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::thread> workers_;
  std::deque<int> ready_;
  std::deque<int> parked_;    // CPU ops ready on the host whose GPU parents had not finished
  std::vector<int> pending_;  // parents not yet finished, per op
  int remaining_ = 0, in_flight_ = 0;
  std::exception_ptr error_;
  OpTimerSet* timers_active_ = nullptr;
  bool shutdown_ = false;
};

REGISTER_NET(dag, DagNet);
REGISTER_NET(async_scheduling, DagNet);

}  // namespace hetnet
