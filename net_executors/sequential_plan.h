// What running a net's operators in order on one thread needs besides the operators: where a CPU
// operator must first wait for queued GPU work, and which operators finish each device's work at the
// end. Shared by the sequential executor (simple_net.cc) and the CUDA graph executor
// (device/cuda/cuda_graph_net.cc), which replays runs of GPU operators in between.
#pragma once

#include <memory>
#include <vector>

#include "core/operator.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

struct SequentialPlan {
  // GPU work is queued on one stream per device: finishing each device's last op suffices.
  std::vector<int> finish;
  // Per op: finish every device's queued work first (a CPU op that overwrites a blob an earlier GPU op
  // reads: a host-to-device copy reads pinned memory asynchronously).
  std::vector<char> drain_before;

  static SequentialPlan For(const caffe2::NetDef& def, const std::vector<std::unique_ptr<OperatorBase>>& ops);
  // Before op i: drains when the plan says so.
  void BeforeOp(int i, const std::vector<std::unique_ptr<OperatorBase>>& ops) const;
  // After the last op: finishes every device's work; errors name the net and the finishing op.
  void FinishAll(const caffe2::NetDef& def, const std::vector<std::unique_ptr<OperatorBase>>& ops) const;
};

}  // namespace hetnet
