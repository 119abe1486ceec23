// Fits a net's measured operator times to its measured run time (issue 17: "from measured kernel
// times where known"). Operator times from profiled runs do not add up to a plain run: on a GPU the
// host issues the next operator while the device runs this one, and timing each operator costs
// time of its own. On an H200 the sum over-predicted all-GPU ResNet-18 at batch 1 by 30% (0.943
// against 0.724 ms), within which the planner preferred a mixed placement that measured 42% slower
// (benchmarks/RESULTS.md, 2026-11-27). So after a net that ran on one device is measured, that
// net's entries for the device are multiplied by the one factor with which the cost model predicts
// the net's own plain run time; a mixed placement is then weighed against what all-GPU (or
// all-CPU) really takes.
#pragma once

#include <map>
#include <set>
#include <string>

#include "core/auto_placement.h"

namespace hetnet {

class NetBase;
class Workspace;

struct RunTimeCalibration {
  std::string device;        // the net's one device ("" when nothing was scaled)
  double scale = 1;          // what its entries were multiplied by
  double predicted_us = 0;   // the prediction of the net with the entries as recorded
  double calibrated_us = 0;  // with the entries scaled
  double measured_us = 0;
  int entries = 0;           // measured_ops entries scaled
  std::string note;          // why nothing was scaled, or that the factor hit a bound
};

// `placed`: the net as created (every op's device option set; no copies: the cost model adds
// them), `input_shapes` and `options` as for AutoPlace (data inputs, where they live). `keys`: the
// measured_ops entries this net recorded (RecordMeasuredOps). Only when every op of `placed` runs
// on one device; the factor is kept within [1/5, 5] (a larger misfit is the model's, not the
// times'), and recorded in profile->run_time_scales under "<device>|<net name>". Nothing is
// scaled when the entries do not change the prediction (a NetDef other than the measured net's).
// Recording again (RecordMeasuredOps overwrites the entries) and fitting again gives the same factor.
RunTimeCalibration CalibrateToRunTime(DeviceProfile* profile, const caffe2::NetDef& placed,
                                      const std::map<std::string, TensorInfo>& input_shapes,
                                      const AutoPlacementOptions& options, const std::set<std::string>& keys,
                                      double measured_us);

// The median time of `runs` plain runs of a created net, each with its external outputs brought
// to the host (what a Predictor returns, and what the cost model ends a run with).
double MedianRunUs(NetBase* net, const Workspace& ws, int runs);

}  // namespace hetnet
