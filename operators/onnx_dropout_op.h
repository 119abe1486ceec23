// OnnxDropout(X, [ratio], [training_mode]) -> Y, [mask]: ONNX's Dropout (opset 12+) with a run-time
// training_mode. Not training (training_mode absent or false): Y = X, mask all true. Training:
// mask = u >= ratio for u uniform in [0, 1), Y = X * mask / (1 - ratio) (ratio 1: Y = 0), ratio
// from input 1 (default 0.5) in [0, 1]. With arg `seed` the draws are NumPy's
// RandomState(seed).uniform(0, 1, X.shape), so a seeded model reproduces a NumPy reference; without
// it, a per-process random seed. The op's generator advances from run to run (seeded once, at
// creation). float32 and float64; CPU only; no gradient (inference import).
#pragma once

#include <cstdint>
#include <random>

#include "core/operator.h"

namespace hetnet {

// NumPy's legacy RandomState stream: MT19937 seeded as RandomState(seed) with an integer seed, and
// random_sample's 53-bit doubles ((a >> 5) * 2^26 + (b >> 6)) / 2^53.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed) : mt_(seed) {}
  double Uniform() {
    const uint32_t a = static_cast<uint32_t>(mt_()) >> 5, b = static_cast<uint32_t>(mt_()) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

 private:
  std::mt19937 mt_;
};

class OnnxDropoutOp final : public Operator<CPUContext> {
 public:
  OnnxDropoutOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool Training();
  double Ratio();
  NumpyRandomState rng_;
};

}  // namespace hetnet
