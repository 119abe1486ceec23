// OnnxLoop([M], [cond], v_initial..., outer...) -> (v_final..., scan_outputs...): ONNX's Loop. Args
// has_trip_count / has_cond say whether M (int64, one value, >= 0) and cond (bool, one value) are
// given; num_carried is the number N of loop-carried values. The NetDef argument `body` (inputs:
// iteration number int64 scalar, condition bool scalar, the N carried values; outputs: condition,
// the N carried values, then the scan outputs) runs in a child workspace (operators/onnx_subgraph.h)
// while cond holds and fewer than M iterations ran. Scan outputs are stacked along a new axis 0.
// A loop never runs more than arg max_iterations (default 2^20) iterations: beyond it, or for an M
// beyond it without a condition, it fails naming the operator. CPU only; no gradient.
#pragma once

#include "core/operator.h"
#include "operators/onnx_subgraph.h"

namespace hetnet {

class OnnxLoopOp final : public Operator<CPUContext> {
 public:
  OnnxLoopOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool has_trip_count_, has_cond_;
  int num_carried_;
  int64_t max_iterations_;
  OnnxSubgraph body_;
};

}  // namespace hetnet
