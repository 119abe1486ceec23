// Per-operator profiling shared by the executors: host steady_clock times for CPU operators, device
// events around the operator's stream for GPU operators. A profiled run yields one OpTiming per op
// on a named lane (a worker thread, or a worker's stream on a GPU); ProfileSummary aggregates runs
// into per-op-type totals and the share spent in copies, and ChromeTraceJson lays runs out lane by
// lane for chrome://tracing or Perfetto.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"

namespace hetnet {

class NetBase;
class OperatorBase;

struct OpTiming {
  int op = 0;
  std::string lane;
  double start_us = 0;  // microseconds since the process's profiling epoch
  double dur_us = 0;       // on the device: host clock for CPU ops, events for GPU ops
  double host_dur_us = 0;  // on the thread that ran it (for a GPU op: launching it)
  // GPU ops: when and on which thread's lane the host issued it (the trace shows both spans, so a
  // host that waits for the device shows as launches that end only after the kernels before them).
  double host_start_us = 0;
  std::string host_lane;
  // Communicator ops (core/collective_stats.h): bytes moved on this rank, peers, algorithm.
  int64_t collective_bytes = -1;  // -1: not a collective
  int collective_peers = 0;
  std::string collective_algorithm;
};

struct RunProfile {
  std::string net_name;
  std::vector<std::string> op_types;  // by op index
  std::vector<std::string> op_names;  // by op index ("" when unnamed)
  std::vector<OpTiming> ops;
  double start_us = 0, wall_us = 0;
};

double ProfilerNowUs();  // steady_clock, microseconds since the profiling epoch
bool IsCopyOpType(const std::string& type);
// Trace lane of `op` run by `thread`: the thread for CPU ops, else the thread's stream on the GPU
// (with copy_streams, copies name their own per-direction stream).
std::string OpLane(const std::string& thread, OperatorBase* op, bool copy_streams);

// Times the operators of one run. Begin/End are called on the thread that runs the operator;
// Resolve after every device has finished the run's work (GPU times come from events).
class OpTimerSet {
 public:
  explicit OpTimerSet(const NetBase& net);
  ~OpTimerSet();
  void StartRun();
  void Begin(int op, OperatorBase* o);
  void End(int op, OperatorBase* o, const std::string& lane);
  RunProfile Resolve();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Implemented by executors that time their own operators while running them (the DAG executor).
class ProfilingExecutor {
 public:
  virtual ~ProfilingExecutor() = default;
  virtual RunProfile RunProfiled() = 0;
};

// Runs `net` once with every operator timed: through the executor when it is a ProfilingExecutor,
// else op by op in net order on the calling thread, as the sequential executor runs them.
RunProfile ProfileRun(NetBase* net);

class ProfileSummary {
 public:
  void Add(const RunProfile& run);
  int runs() const { return runs_; }
  std::vector<double> MeanOpMs() const;                // by op index
  std::map<std::string, double> MeanTypeMs() const;    // op type -> ms per run
  std::map<std::string, int> TypeCounts() const;       // op type -> ops in the net
  double MeanWallMs() const { return runs_ ? wall_us_ / runs_ / 1e3 : 0; }
  double CopyShare() const;  // time in copy ops over time in all ops
  // Markdown: per-op-type totals (ms per run, share), then copies' share and wall time.
  std::string ToMarkdown() const;

 private:
  int runs_ = 0;
  double wall_us_ = 0;
  std::vector<std::string> types_;
  std::vector<double> op_us_;
};

// Chrome trace event format: one "X" event per op, lanes as threads (named by metadata events).
std::string ChromeTraceJson(const std::vector<RunProfile>& runs);
void WriteChromeTrace(const std::string& path, const std::vector<RunProfile>& runs);

// Warm-up runs, then `iters` profiled runs: the summary and (kept when keep_runs) every run.
struct ProfileResult {
  ProfileSummary summary;
  std::vector<RunProfile> runs;
  double unprofiled_ms_per_run = 0;  // whole-net time of `iters` plain runs
};
ProfileResult ProfileNet(NetBase* net, int warmup, int iters, bool keep_runs);

}  // namespace hetnet
