// OnnxScan(state_initial..., scan_inputs..., outer...) -> (state_final..., scan_outputs...): ONNX's
// Scan (opset 9+). Args num_states (N), num_scan_inputs (M), scan_input_axes / scan_input_directions
// (per scan input; default axis 0, direction 0 = forward, 1 = reverse), scan_output_axes /
// scan_output_directions (per scan output; an axis may be negative, counted in the output's rank).
// All scan inputs must have one length L along their axis; the NetDef argument `body` (inputs: the
// N states, then one slice of each scan input with the axis removed; outputs: the N states, then the
// scan outputs) runs L times in a child workspace (operators/onnx_subgraph.h); the slices of each
// scan output are stacked along its axis (reversed for direction 1). Arg batched=1 is opset 8's
// form: every input and output has a batch axis 0 (of one size B) and the scan above runs once per
// batch item (scan_input_axes then count without the batch axis). CPU only; no gradient.
#pragma once

#include <vector>

#include "core/operator.h"
#include "operators/onnx_subgraph.h"

namespace hetnet {

class OnnxScanOp final : public Operator<CPUContext> {
 public:
  OnnxScanOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  // One scan over `in` (states, then scan inputs); out: final states, then the stacked scan outputs.
  void ScanOnce(const std::vector<const Tensor*>& in, std::vector<Tensor>* out);

  int num_states_, num_scan_inputs_;
  bool batched_;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
  OnnxSubgraph body_;
};

}  // namespace hetnet
