// DFT(X[, dft_length][, axis]) -> Y: ONNX's DFT (opsets 17-20); args length_input / axis_input name
// the inputs holding dft_length / axis (default: dft_length is input 1 when given, axis from arg axis). X [..., n_in, ..., 1 or 2] (the last dim: real,
// or real and imaginary parts); the transform runs along arg axis (default -2, negative from the end
// of X's dims; not the last). dft_length (one int32/int64 value >= 1, default n_in; 2 (n_in - 1) for an
// inverse one-sided transform) pads with zeros or truncates. Args: inverse (x[t] = 1/n sum X[k]
// e^{+2 pi i k t / n}), onesided (forward: the first n/2 + 1 bins only; inverse: the input holds those
// bins of a Hermitian spectrum and Y is real, last dim 1, as numpy's irfft). Y float32/64 like X,
// computed as numpy 2.x computes it (operators/dft_fft_passes.h: pocketfft's radix passes; a float32
// complex inverse in float32 with the 1/n at the end, everything else in float64), so that complex
// transforms equal numpy's bit for bit (one-sided ones: numpy's real transforms are not reproduced,
// close only). A length with a prime factor > 11 takes the O(n^2) sum in float64 (capped at 2^32 terms;
// the FFT at 2^32 signal values). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class DftOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
