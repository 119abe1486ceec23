// A complex FFT that computes the way numpy's FFT does (numpy 2.x runs pocketfft's C++ header-only
// cfftp: the same factorization into radix 8, 4, 2 (moved to the front) and odd factors, the same radix
// passes and operation order, twiddles from cos/sin in double rounded to T, and the scale factor fct
// applied after the last pass), so that float32 and float64 results match numpy's bit for bit. Used by
// DFT (operators/dft_op.cc). Radices 2, 3, 4, 5, 7, 8 and 11 are covered; a length with another prime
// factor (numpy: pocketfft's generic pass) or one for which pocketfft would pick Bluestein's algorithm
// is not supported() and the caller falls back to its own computation.
#pragma once

#include <cstdint>
#include <vector>

namespace hetnet {

template <typename T>
class PocketFftPlan {
 public:
  explicit PocketFftPlan(int64_t n);  // n >= 1
  // Whether n's prime factors are all <= 11 (then the plan computes as numpy; else Exec must not be called).
  static bool Supports(int64_t n);
  bool supported() const { return supported_; }
  struct Cx {
    T r, i;
  };
  // c: the n values, transformed in place (only when supported()). forward: sum_t c[t] e^{-2 pi i k t / n},
  // else e^{+2 pi i k t / n}; every result is then multiplied by fct (numpy: 1 forward, T(1) / T(n) inverse).
  void Exec(std::vector<Cx>& c, bool forward, T fct) const;

 private:
  int64_t n_;
  bool supported_ = true;
  std::vector<int64_t> factors_;
  std::vector<std::vector<Cx>> twiddles_;  // per factor ip: (ip - 1) * (ido - 1), pocketfft's layout
};

extern template class PocketFftPlan<float>;
extern template class PocketFftPlan<double>;

}  // namespace hetnet
