// CausalConvWithState(input, weight, [bias], [past_state]) -> output, present_state: ONNX's
// CausalConvWithState (opset 27), a depthwise causal 1-D convolution that carries its left context:
// input [B, C, L], weight [C, 1, k], bias [C], past_state [B, C, k-1] (zeros when absent) prepended
// to the input; output[b, c, t] = bias[c] + sum_j weight[c, 0, j] * padded[b, c, t + j] ([B, C, L]),
// then SiLU (x * sigmoid(x)) with activation "silu" / "swish" ("none": as is); present_state is the
// last k-1 steps of the padded input. Optional inputs present as args has_bias, has_past say.
// float32/64, float16, bfloat16 (one dtype); computed in float32 (float64 for float64). CPU only;
// no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class CausalConvWithStateOp final : public Operator<CPUContext> {
 public:
  CausalConvWithStateOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T, typename C>
  void Compute();

  bool has_bias_, has_past_, silu_;
};

}  // namespace hetnet
