#include "operators/onnx_stft_op.h"

#include <cmath>
#include <complex>
#include <vector>

#include "core/checked_size.h"
#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

void OnnxStftOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const DataType t = X.dtype();
  HN_ENFORCE((t == DataType::Float || t == DataType::Double) && X.ndim() == 3 && (X.dim(2) == 1 || X.dim(2) == 2),
             type(), ": signal (input 0, '", def().input(0), "') is ", DataTypeName(t), " ", X.ShapeString(),
             "; float32 or float64 [batch, length, 1 or 2] is required");
  const int window_in = GetSingleArgument<int>("window_input", -1),
            length_in = GetSingleArgument<int>("frame_length_input", -1);
  for (int i : {window_in, length_in})
    HN_ENFORCE(i < InputSize() && i != 0 && i != 1, type(), ": optional input position ", i, " is not an input 2.. ",
               InputSize() - 1);
  const int64_t B = X.dim(0), L = X.dim(1), comps = X.dim(2);
  const double step_value = ScalarInput(*this, 1);
  const int64_t step = static_cast<int64_t>(step_value);
  HN_ENFORCE(step_value >= 1 && step_value <= 9.0e15, type(), ": frame_step (input 1, '", def().input(1), "') is ",
             step_value, "; a positive integer is required");
  int64_t n = window_in > 0 ? Input(window_in).numel() : L;
  if (length_in > 0) {
    const double v = ScalarInput(*this, length_in);
    HN_ENFORCE(v >= 1 && v <= 9.0e15, type(), ": frame_length (input ", length_in, ", '", def().input(length_in),
               "') is ", v, "; a positive integer is required");
    n = static_cast<int64_t>(v);
  }
  if (window_in > 0) {
    const Tensor& W = Input(window_in);
    HN_ENFORCE(W.ndim() == 1 && W.numel() == n, type(), ": window (input ", window_in, ", '", def().input(window_in),
               "') has shape ", W.ShapeString(), " but the frame length is ", n);
  }
  HN_ENFORCE(n >= 1 && n <= L, type(), ": frame length ", n, " does not fit the signal '", def().input(0), "' ",
             X.ShapeString(), " (1 to its length ", L, ")");
  const bool onesided = GetSingleArgument<int>("onesided", 1) != 0;
  const int64_t frames = 1 + (L - n) / step, bins = onesided ? n / 2 + 1 : n;
  const std::vector<int64_t> shape{B, frames, bins, 2};
  CheckedNumel(shape, "STFT output");
  HN_ENFORCE(static_cast<double>(B) * frames * bins * n <= 4294967296.0, type(), ": ", B * frames,
             " frames of length ", n, " need more than 2^32 terms");
  std::vector<double> window(n, 1.0);
  if (window_in > 0)
    for (int64_t i = 0; i < n; ++i) window[i] = ElementAsDouble(*this, Input(window_in), window_in, i);
  Tensor* Y = Output(0, shape, t);
  const double pi = std::acos(-1.0);
  std::vector<std::complex<double>> z(n), twiddle(n);
  for (int64_t i = 0; i < n; ++i) twiddle[i] = std::polar(1.0, -2 * pi * static_cast<double>(i) / n);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = (b * L + f * step + i) * comps;
        const double re = ElementAsDouble(*this, X, 0, at), im = comps == 2 ? ElementAsDouble(*this, X, 0, at + 1) : 0;
        z[i] = std::complex<double>(re, im) * window[i];
      }
      for (int64_t k = 0; k < bins; ++k) {
        std::complex<double> acc;
        for (int64_t i = 0; i < n; ++i) acc += z[i] * twiddle[(k * i) % n];
        const int64_t at = ((b * frames + f) * bins + k) * 2;
        if (t == DataType::Float) {
          Y->mutable_data<float>()[at] = static_cast<float>(acc.real());
          Y->mutable_data<float>()[at + 1] = static_cast<float>(acc.imag());
        } else {
          Y->mutable_data<double>()[at] = acc.real();
          Y->mutable_data<double>()[at + 1] = acc.imag();
        }
      }
    }
}

OPERATOR_SCHEMA(OnnxSTFT).NumInputs(2, 4).NumOutputs(1)
    .SetDoc("ONNX's STFT: windowed frames of the signal DFT'd ([batch, frames, bins, 2]); args onesided, "
            "window_input, frame_length_input. float32/64, O(n^2) per frame in float64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxSTFT, OnnxStftOp);
NO_GRADIENT(OnnxSTFT);

}  // namespace hetnet
