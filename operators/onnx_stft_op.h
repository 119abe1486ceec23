// OnnxSTFT(signal, frame_step[, window][, frame_length]) -> Y: ONNX's STFT-17. signal [B, L, 1] (real) or [B, L, 2]
// (complex); frames of frame_length n (default: the window's length, else L) every frame_step samples, each times
// the window (default ones), DFT'd: Y [B, 1 + (L - n) / frame_step, bins, 2] with bins n / 2 + 1 (arg onesided, the
// default 1) or n. The optional inputs are found by position args window_input / frame_length_input (-1: absent).
// float32 or float64, an O(n^2) sum per frame in float64 (not the DFT operator's FFT passes). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class OnnxStftOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
