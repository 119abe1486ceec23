// Cost-based automatic placement (issue 17): chooses a device for every operator the user did not
// pin, from predicted compute time per device (core/op_cost.h against core/device_profile.h) and
// the copies each choice implies (bytes over link bandwidth plus latency), minimizing the
// predicted time of one run of the net's DAG. Never places an op where its type has no kernel;
// respects per-device memory caps. Exact search on small nets, a heuristic on large ones.
#pragma once

#include <cstdint>
#include <map>
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
  std::string ToText() const;                   // the report: per op, predictions and why
};

// Throws kInvalidArgument when no placement fits the memory caps (naming the device and bytes),
// kNotFound for a device missing from the profile.
AutoPlacementResult AutoPlace(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& input_shapes,
                              const DeviceProfile& profile, const AutoPlacementOptions& options = {});

}  // namespace hetnet
