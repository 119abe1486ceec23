// ONNX's ai.onnx.preview.training optimizers, one update of n tensors per run (the formulas of the
// ONNX operator docs, evaluated in float64 per element, stored as the tensors' dtype):
//   OnnxAdagrad(R, T, X1..n, G1..n, H1..n) -> X1..n_new, H1..n_new   args decay_factor, epsilon,
//     norm_coefficient: r = R / (1 + T * decay_factor), g = norm_coefficient * X + G, H' = H + g^2,
//     X' = X - r * g / (sqrt(H') + epsilon)
//   OnnxMomentum(R, T, X, G, V) -> X_new, V_new   args alpha, beta, mode ("standard" | "nesterov"),
//     norm_coefficient: g as above, V' = alpha * V + (T > 0 ? beta : 1) * g, X' = X - R * V'
//     (nesterov: X - R * (g + alpha * V'))
//   OnnxAdam(R, T, X, G, V, H) -> X_new, V_new, H_new   args alpha, beta, epsilon, norm_coefficient,
//     norm_coefficient_post: V' = alpha V + (1 - alpha) g, H' = beta H + (1 - beta) g^2,
//     r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R, X' = (1 - norm_coefficient_post)(X - r V' /
//     (sqrt(H') + epsilon))
// R is one float32/64, T one int64; each group's tensors share X's shape; float32 and float64. CPU
// only; no gradient.
#pragma once

#include <string>

#include "core/operator.h"

namespace hetnet {

enum class OnnxOptimizer { kAdagrad, kMomentum, kAdam };

template <OnnxOptimizer K>
class OnnxOptimizerOp final : public Operator<CPUContext> {
 public:
  OnnxOptimizerOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  int states_;  // per tensor: Adagrad H; Momentum V; Adam V and H
  double alpha_, beta_, epsilon_, decay_, norm_, norm_post_;
  bool nesterov_;
};

}  // namespace hetnet
