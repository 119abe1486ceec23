#include "operators/dft_op.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "core/checked_size.h"
#include "operators/cnn_op_utils.h"
#include "operators/dft_fft_passes.h"
#include "operators/onnx_op_util.h"

namespace hetnet {
namespace {

// z <- its transform by the plan in T (inverse: scaled by T(1) / T(n) at the end, as numpy).
template <typename T>
void RunPlan(const PocketFftPlan<T>& plan, bool inverse, std::vector<std::complex<double>>* z) {
  const int64_t n = static_cast<int64_t>(z->size());
  std::vector<typename PocketFftPlan<T>::Cx> c(n);
  for (int64_t t = 0; t < n; ++t) c[t] = {static_cast<T>((*z)[t].real()), static_cast<T>((*z)[t].imag())};
  plan.Exec(c, !inverse, inverse ? T(1) / static_cast<T>(n) : T(1));
  for (int64_t t = 0; t < n; ++t) (*z)[t] = {c[t].r, c[t].i};
}

// z[0..n_out) <- the first n_out bins of z's transform, by the O(n^2) sum in double.
void DirectDft(bool inverse, int64_t n_out, std::vector<std::complex<double>>* z) {
  const int64_t n = static_cast<int64_t>(z->size());
  const double pi = std::acos(-1.0), sign = inverse ? 1.0 : -1.0;
  std::vector<std::complex<double>> out(n_out);
  for (int64_t k = 0; k < n_out; ++k) {
    std::complex<double> acc;
    for (int64_t t = 0; t < n; ++t) {
      const double angle = sign * 2 * pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      acc += (*z)[t] * std::complex<double>(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? acc / static_cast<double>(n) : acc;
  }
  std::copy(out.begin(), out.end(), z->begin());
}

}  // namespace

void DftOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() == DataType::Float || X.dtype() == DataType::Double, type(), ": input 0 ('", def().input(0),
             "') is ", DataTypeName(X.dtype()), "; float32 or float64 is required");
  const int r = X.ndim();
  HN_ENFORCE(r >= 2 && (X.dim(-1) == 1 || X.dim(-1) == 2), type(), ": input 0 ('", def().input(0), "') has shape ",
             X.ShapeString(), "; [..., signal, ..., 1 or 2] is required");
  // Optional inputs by position args (an omitted one has none): dft_length and axis (opset 20).
  const int length_input = GetSingleArgument<int>("length_input", InputSize() > 1 ? 1 : -1),
            axis_input = GetSingleArgument<int>("axis_input", -1);
  const int64_t a = axis_input > 0 ? static_cast<int64_t>(ScalarInput(*this, axis_input))
                                   : GetSingleArgument<int64_t>("axis", -2);
  HN_ENFORCE(a >= -r && a < r && (a < 0 ? a + r : a) != r - 1, type(), ": axis ", a, " is out of range for input 0 ('",
             def().input(0), "') of ", r, " dims (the last holds the complex parts)");
  const int axis = static_cast<int>(a < 0 ? a + r : a);
  const bool inverse = GetSingleArgument<int>("inverse", 0) != 0, onesided = GetSingleArgument<int>("onesided", 0) != 0;
  const int64_t n_in = X.dim(axis), comps = X.dim(-1);
  int64_t n = inverse && onesided ? 2 * (n_in - 1) : n_in;
  if (length_input > 0) {
    n = static_cast<int64_t>(ScalarInput(*this, length_input));
    HN_ENFORCE(n >= 1, type(), ": dft_length ", n, " (input ", length_input, ", '", def().input(length_input),
               "') must be >= 1");
  }
  HN_ENFORCE(n >= 1, type(), ": the signal length is ", n, "; it must be >= 1");
  const bool irfft = inverse && onesided;
  const int64_t n_out = !inverse && onesided ? n / 2 + 1 : n, out_comps = irfft ? 1 : 2;
  const int64_t outer = ProdDims(X.shape(), 0, axis), inner = ProdDims(X.shape(), axis + 1, r - 1);
  std::vector<int64_t> shape = X.shape();
  shape[axis] = n_out;
  shape.back() = out_comps;
  CheckedNumel(shape, "DFT output");
  // numpy's arithmetic (operators/dft_fft_passes.h): its complex64 inverse FFT runs in float32 (the 1/n is a
  // float32), every other transform of float32 data in float64, rounded at the end; float64 in float64. A
  // length pocketfft would not run with radices 2-11 takes the O(n^2) sum in float64 instead.
  const bool single = X.dtype() == DataType::Float && inverse && !onesided;
  const bool fast = PocketFftPlan<double>::Supports(n);
  HN_ENFORCE(static_cast<double>(outer) * inner * n * (fast ? 1 : n_out) <= 4294967296.0, type(), ": ", outer * inner,
             " signals of length ", n, " need more than 2^32 terms");
  std::unique_ptr<PocketFftPlan<float>> plan32(fast && single ? new PocketFftPlan<float>(n) : nullptr);
  std::unique_ptr<PocketFftPlan<double>> plan64(fast && !single ? new PocketFftPlan<double>(n) : nullptr);
  Tensor* Y = Output(0, shape, X.dtype());
  std::vector<std::complex<double>> z(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto in_at = [&](int64_t t, int64_t c) {
        return ElementAsDouble(*this, X, 0, ((o * n_in + t) * inner + i) * comps + c);
      };
      std::fill(z.begin(), z.end(), std::complex<double>());
      if (irfft) {  // the first n/2 + 1 bins given; the rest by Hermitian symmetry
        for (int64_t k = 0; k <= n / 2 && k < n_in; ++k) {
          const std::complex<double> v(in_at(k, 0), comps == 2 ? in_at(k, 1) : 0.0);
          z[k] = v;
          if (k > 0 && n - k > n / 2) z[n - k] = std::conj(v);
        }
        z[0] = z[0].real();
        if (n % 2 == 0) z[n / 2] = z[n / 2].real();
      } else {
        for (int64_t t = 0; t < n && t < n_in; ++t) z[t] = {in_at(t, 0), comps == 2 ? in_at(t, 1) : 0.0};
      }
      if (plan32) RunPlan(*plan32, inverse, &z);
      else if (plan64) RunPlan(*plan64, inverse, &z);
      else DirectDft(inverse, n_out, &z);
      for (int64_t k = 0; k < n_out; ++k) {
        const int64_t at = ((o * n_out + k) * inner + i) * out_comps;
        for (int64_t c = 0; c < out_comps; ++c) {
          const double v = c == 0 ? z[k].real() : z[k].imag();
          if (X.dtype() == DataType::Float) Y->mutable_data<float>()[at + c] = static_cast<float>(v);
          else Y->mutable_data<double>()[at + c] = v;
        }
      }
    }
}

OPERATOR_SCHEMA(DFT).NumInputs(1, 3).NumOutputs(1)
    .SetDoc("ONNX's DFT(X[, dft_length]) -> Y along arg axis (default -2); args inverse, onesided (inverse one-sided: "
            "numpy's irfft, real Y). float32/64, computed as numpy's pocketfft does (lengths with prime factors <= 11; "
            "others by the O(n^2) sum in float64). CPU only; no gradient.");
REGISTER_CPU_OPERATOR(DFT, DftOp);

}  // namespace hetnet
