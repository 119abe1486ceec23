// ONNX's window generators HannWindow, HammingWindow, BlackmanWindow(size) -> Y: Y [size] with
// w[n] = 0.5 - 0.5 cos(2 pi n / M) (Hann), 25/46 - 21/46 cos(2 pi n / M) (Hamming),
// 0.42 - 0.5 cos(2 pi n / M) + 0.08 cos(4 pi n / M) (Blackman), M = size (arg periodic, default 1)
// or size - 1 (periodic 0; a one-element symmetric window is [1]). size: one int32/int64 value >= 0.
// Arg dtype (a TensorProto data type, default float32) is Y's; computed in float64. CPU only.
#pragma once

#include "core/operator.h"

namespace hetnet {

enum class WindowKind { kHann, kHamming, kBlackman };

template <WindowKind K>
class WindowOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
