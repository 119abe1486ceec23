// ONNX's losses over class axis 1: NegativeLogLikelihoodLoss(X, target [, weight]) -> loss and
// SoftmaxCrossEntropyLoss(scores, labels [, weight]) -> loss [, log_prob], where log_prob is the
// log-softmax of scores along axis 1 (computed stably) and the SCE loss is the NLL of log_prob.
// X is (N, C, d1..dk) float or double, target (N, d1..dk) int32/int64 in [0, C) or equal to arg
// ignore_index (those positions contribute 0 and weigh 0), weight (C) of X's dtype (default 1).
// Per position loss = -X[n, t, d...] * weight[t]; arg reduction: "none" (that tensor, target's shape),
// "sum" (a scalar) or "mean" (default: sum / the sum of the weights of the positions not ignored).
// CPU kernel (other devices fall back to it); no gradient.
#pragma once

#include <string>

#include "core/operator.h"

namespace hetnet {

template <bool kSoftmax>
class OnnxClassLossOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;

 private:
  template <typename T>
  void Run();
};

}  // namespace hetnet
