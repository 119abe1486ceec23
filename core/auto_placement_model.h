// Internals of AutoPlace (core/auto_placement.h): the net reduced to integer ids with every cost
// precomputed (Problem), the list-schedule simulation of one placement (Simulator), and the
// searches over placements. Not a public interface.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/auto_placement.h"

namespace hetnet {
namespace auto_placement {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Problem {
  int n_ops = 0, n_dev = 0, n_blobs = 0;
  std::vector<Device> devs;  // devs[0] is the CPU
  std::vector<std::string> dev_names;
  bool throughput = false;
  // The sequential executor (net types "", "simple", "cuda_graph"): one host thread runs the ops in
  // net order, and a copy is an op there, issued just before its reader on the GPU's compute
  // stream, so it starts only after the GPU work issued before it; a copy to the CPU holds the
  // host until it lands (operators/copy_op.cu: sync_host). The DAG executor gives copies streams
  // of their own and frees the host: there a copy starts when its value is ready.
  bool sequential = true;
  // Per op.
  std::vector<std::string> types;
  std::vector<std::vector<double>> compute_us;  // [op][dev]; kInf where the type has no kernel
  // [op][dev]: the host's time to issue the op to a GPU (0 on the CPU), on the CPU's queue: the
  // executor's thread launches GPU work between its CPU ops, and the GPU runs compute_us after the
  // launch, overlapping the host's next ops. (Summing both per op, as before 2026-11-27, charged a
  // chain of GPU ops each launch and each kernel: 40% over on LeNet batch 64 on the H100.)
  std::vector<std::vector<double>> launch_us;
  std::vector<int> pinned;                      // device index, -1 when free
  std::vector<std::vector<int>> parents;        // the executor's dependency graph (core/dag_graph.cc)
  std::vector<std::vector<int>> in_blobs, out_blobs;
  std::vector<std::vector<std::vector<int>>> in_need, out_need;  // [op][dev][k]: device index
  std::vector<std::vector<int>> freed_after;    // [op]: blobs whose last reader is this op
  // Per blob.
  std::vector<std::string> blob_names;
  std::vector<double> bytes;       // 0 when the shape is unknown
  std::vector<int> home;           // data inputs: the device they live on; else -1
  std::vector<char> param;         // loaded once per reading device, no per-run copy
  std::vector<int> final_outputs;  // must be on the CPU at the end of a run
  // Per device pair [from * n_dev + to]: microseconds per byte and latency of a copy.
  std::vector<double> us_per_byte, latency_us;
  std::vector<int64_t> caps;       // per device; 0: no cap
  std::vector<double> run_overhead_us;  // per device: added once per run that uses it (the CPU always)

  int Free(int op) const { return pinned[op] < 0; }
  double OpUs(int op, int dev) const { return launch_us[op][dev] + compute_us[op][dev]; }  // alone
  double CopyUs(int from, int to, double nbytes) const {
    const int k = from * n_dev + to;
    return latency_us[k] + nbytes * us_per_byte[k];
  }
};

// Builds the Problem (shape inference, op costs, kernels, pins, memory rules).
Problem BuildProblem(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& input_shapes,
                     const DeviceProfile& profile, const AutoPlacementOptions& options,
                     std::vector<std::string>* pin_reasons);

// State of the list-schedule simulation after some prefix of the ops (net order is a topological
// order of the dependency graph). Copyable: the exact search branches on copies.
struct SimState {
  int next_op = 0;
  double makespan = 0;
  std::vector<double> avail;     // [blob * n_dev + dev]: when the value is there; -1: not there
  std::vector<double> op_finish;
  std::vector<int> op_dev;       // where each scheduled op runs
  std::vector<double> queue_free, busy;           // compute queue per device
  std::vector<double> link_free, link_busy;       // copy queue per direction [from * n_dev + to]
  std::vector<double> mem_cur, mem_peak, weights;  // bytes per device
  std::vector<char> param_on;    // [blob * n_dev + dev]
};

struct Evaluation {
  double cost = kInf;      // objective value; kInf when over a memory cap
  double makespan = 0;     // one run, copies included
  std::vector<double> need;  // weights + activation peak per device
  std::vector<double> busy;  // compute per device
  // Tie-break of equal costs, so that local search can cross plateaus: throughput, the sum of
  // squared queue loads (spread work before the busiest queue can drop); latency, total work.
  double secondary = 0;
  int over_dev = -1;       // the device most over its cap
  double over_bytes = 0;
};

class Simulator {
 public:
  explicit Simulator(const Problem& p) : p_(p) {}
  SimState Start() const;
  void Step(SimState* s, int dev) const;  // schedules op s->next_op on dev
  Evaluation Finish(SimState s) const;    // final outputs back to the CPU; objective and memory
  Evaluation Run(const std::vector<int>& placement) const;
  // Lower bound of any completion's cost, for branch and bound; kInf when already over a cap.
  double LowerBound(const SimState& s, const std::vector<double>& min_rest_us) const;

 private:
  double Ensure(SimState* s, int blob, int dev) const;  // copies the blob to dev if needed
  const Problem& p_;
};

struct SearchResult {
  std::vector<int> placement;
  Evaluation eval;
  bool exact = false;
  int64_t evaluated = 0;
};

// Exhaustive over the free ops' devices with branch and bound.
SearchResult ExactSearch(const Problem& p);
// Best of all-CPU / all-<device> / greedy, then iterated single-op flips and contiguous-segment moves.
SearchResult HeuristicSearch(const Problem& p, double budget_ms);
// The placement that puts every op it can on `dev` (pins kept; others on the CPU, else any kernel).
std::vector<int> AllOn(const Problem& p, int dev, bool keep_pins);

}  // namespace auto_placement
}  // namespace hetnet
