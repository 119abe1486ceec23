// OnnxMelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz) -> Y
// [dft_length / 2 + 1, num_mel_bins]: ONNX's MelWeightMatrix-17 as its reference computes it: num_mel_bins + 2 points
// evenly spaced in mel (2595 log10(1 + f / 700)) from lower to upper edge, back to hertz and to DFT bins
// floor((dft_length + 1) * f / sample_rate), triangles rising from each point's left bin to its center and falling
// to its right one. The edges' arithmetic runs in their dtype (float32 or float64), as numpy's; arg dtype (the
// output's, default float32). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class OnnxMelWeightMatrixOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
