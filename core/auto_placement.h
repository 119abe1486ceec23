// Cost-based automatic placement (issue 17): chooses a device for every operator the user did not
// pin, from predicted compute time per device (core/op_cost.h against core/device_profile.h) and
// the copies each choice implies (bytes over link bandwidth plus latency), minimizing the
// predicted time of one run of the net's DAG. Never places an op where its type has no kernel;
// respects per-device memory caps. Exact search on small nets, a heuristic on large ones.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/device_profile.h"
#include "core/op_schema.h"  // TensorInfo
#include "proto/caffe2.pb.h"

namespace hetnet {

struct AutoPlacementOptions {
  std::vector<Device> devices;  // candidates; empty: "cpu" plus every device of the profile
  enum class Objective { kLatency, kThroughput } objective = Objective::kLatency;
  std::map<std::string, int64_t> memory_caps;  // bytes per device name ("cuda:0"); absent: the profile's
  bool override_pinned = false;                // explicit device options stay unless set
  int exact_limit = 14;                        // exhaustive search up to this many free ops
  // Blobs read before the net writes them that are per-run data (copied to their readers on every
  // run, from `input_devices`); every other such blob is a parameter (loaded once onto each device
  // that reads it, counted in that device's memory, no per-run copy). Empty: the net's first
  // external input is data (Caffe2 model helpers list data first).
  std::set<std::string> data_inputs;
  std::map<std::string, Device> input_devices;  // where data inputs live; absent: CPU
  // Whether `type` has a kernel on `device`; empty: this build's operator registry (a build
  // without CUDA assumes every type has a CUDA kernel, as offline planning does).
  std::function<bool(const std::string& type, const Device& device)> has_kernel;
  double heuristic_budget_ms = 500;  // the local search stops improving after this long
  // A mixed placement must beat the best one-device placement (pins kept) by this fraction of its
  // predicted cost, else that one wins: predictions err by 10-25% on a GPU (benchmarks/RESULTS.md,
  // 2026-11-26), and a 1-4% predicted gain measured as an 11-43% loss there. 0: the search's optimum.
  double min_mixed_gain = 0.03;
};

struct OpPrediction {
  int op = 0;  // index in the input net
  std::string type;
  std::map<std::string, double> predicted_us;  // compute time on each candidate device
  std::string chosen;                          // device name
  bool pinned = false;                         // kept the user's device option
  std::string why;  // "pinned by the user", "cuda:0 3.1 us vs cpu 40 us incl. copies", "no CUDA kernel"
};

struct AutoPlacementResult {
  caffe2::NetDef net;  // the input net with every op's device_option set (copies not yet inserted)
  std::vector<OpPrediction> ops;
  double predicted_us = 0;                      // one run, copies included
  std::map<std::string, double> baselines_us;   // "all cpu", "all cuda:0" (where every op has a kernel)
  std::map<std::string, int64_t> peak_bytes;    // weights + activation peak per device
  bool exact = false;                           // exhaustive search (else the heuristic)
  double planner_ms = 0;
  std::string objective;                        // "latency" or "throughput"
  std::string profile_source;                   // the profile's machine and source, for the report
  std::map<std::string, double> busy_us;        // compute time per device in the chosen placement
  double objective_us = 0;  // latency: predicted_us; throughput: the busiest compute/copy queue per run
  std::map<std::string, int64_t> caps;          // memory cap per device (absent: none)
  std::set<std::string> data_inputs;            // per-run inputs; the other blobs read first are weights
  int64_t placements_evaluated = 0;             // simulations run by the search
  std::string ToText() const;                   // the report: per op, predictions and why
};

// Throws kInvalidArgument when no placement fits the memory caps (naming the device and bytes),
// kNotFound for a device missing from the profile.
AutoPlacementResult AutoPlace(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& input_shapes,
                              const DeviceProfile& profile, const AutoPlacementOptions& options = {});

// Candidate device names parsed from "cpu,cuda:0" (validated like `hetnet inspect --devices`).
std::vector<Device> ParseDeviceList(const std::vector<std::string>& names);

// A profile for this machine from rough built-in constants (no calibration): the CPU and
// `gpu_count` GPUs with PCIe links. Its `source` says it is a rough estimate.
DeviceProfile BuiltinFallbackProfile(int gpu_count);
// The profile named by $HETNET_DEVICE_PROFILE (its load errors say so), else
// BuiltinFallbackProfile(gpu_count): what net creation, the bindings and `hetnet inspect` plan with.
DeviceProfile ProfileFromEnvironment(int gpu_count);

// Net creation's hook (PlaceNet): when the net argument placement="auto", the net with every
// unpinned op placed by AutoPlace for this machine (profile from $HETNET_DEVICE_PROFILE, else the
// built-in fallback; candidates: the CPU and the profile's GPUs this machine has; objective from
// the net argument placement_objective, "latency" (default) or "throughput"); otherwise `def`
// unchanged and *result untouched. Throws kInvalidArgument for an unknown placement value.
bool MaybeAutoPlace(const caffe2::NetDef& def, const std::map<std::string, Device>& input_devices,
                    const std::map<std::string, TensorInfo>& input_shapes, int gpu_count,
                    AutoPlacementResult* result);
// Rewrites the reasons of a placement report of the auto-placed net: "auto: <why>" for its ops.
struct PlacementReport;
void AnnotateAutoPlacement(const AutoPlacementResult& result, PlacementReport* report);
// The offline plan (PlanPlacement, core/placement.h) of an auto-placed net for a machine with
// `devices`: weights loaded onto their first reader's device, data inputs on the CPU, the report's
// reasons AutoPlace's. Shared by `hetnet inspect --placement --auto` and workspace.PlacementReport.
struct CopyPassResult;
struct PlacementOptions;
CopyPassResult PlanAutoPlaced(const AutoPlacementResult& planned, const std::vector<std::string>& devices,
                              const std::map<std::string, TensorInfo>& shapes, const PlacementOptions& opts);

// Predicted beside measured after a profiled run of the placed net (copies inserted; the
// executor's ops are matched to the planned ones in order, copies summed apart).
struct RunProfile;
struct PredictedVsMeasured {
  struct Row {
    int op = 0;
    std::string type, device;
    double predicted_us = 0, measured_us = -1;  // -1: not matched
  };
  std::vector<Row> ops;
  double predicted_total_us = 0, measured_wall_us = 0;
  double measured_copy_us = 0;
  std::string ToText() const;
};
PredictedVsMeasured ComparePrediction(const AutoPlacementResult& result, const RunProfile& run);

}  // namespace hetnet
