// RNN / GRU / LSTM (X, W, R, [B], [sequence_lens], [initial_h], [initial_c], [P]) -> Y, Y_h, [Y_c]:
// ONNX's recurrent layers (opset 22 semantics) as CPU kernels, one class for the three cells (the
// operator type picks the cell). Arg `inputs` lists the ONNX input indices present (default 0, 1, 2),
// in that order. X [S, N, I] (layout 0) or [N, S, I] (layout 1); W [D, G*H, I], R [D, G*H, H],
// B [D, 2*G*H] (zeros when absent), P [D, 3*H] (LSTM peepholes i, o, f), initial_h/c [D, N, H]
// (layout 1: [N, D, H]), sequence_lens int32/int64 [N] (steps past a sequence's length leave Y zero
// and the state unchanged). D = 2 for direction "bidirectional", else 1; G = 1 (RNN), 3 (GRU: z, r,
// h), 4 (LSTM: i, o, f, c). Y [S, D, N, H] (layout 1: [N, S, D, H]), Y_h/Y_c [D, N, H] (layout 1:
// [N, D, H]). Args: hidden_size, direction, layout, clip (> 0: gate inputs clamped), activations
// (Sigmoid, Tanh, Relu; per direction: RNN 1, GRU 2, LSTM 3), linear_before_reset (GRU), input_forget
// (LSTM: f = 1 - i). float32/64. CPU only; no gradient.
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class OnnxRecurrentOp final : public Operator<CPUContext> {
 public:
  OnnxRecurrentOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T>
  void Compute();

  int gates_;                       // 1, 3, 4
  std::vector<int> slot_;           // ONNX input index -> def input (-1: absent)
  int64_t hidden_, layout_;
  int directions_;
  bool reverse_only_, linear_before_reset_, input_forget_;
  float clip_;
  std::vector<int> act_;            // per direction, per activation: 0 sigmoid, 1 tanh, 2 relu
};

}  // namespace hetnet
