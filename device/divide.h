// Division as the elementwise kernels of both devices compute it (device/math_cpu.cc,
// device/cuda/math_cuda.cu). Integers: x / 0 is 0, and the one quotient that overflows (lowest / -1)
// wraps to lowest, as NumPy gives, instead of C++'s undefined behaviour (SIGFPE that kills the
// process on x86, an unspecified value on a GPU): a model that divides by an input cannot bring a
// server down, and both devices agree. Otherwise truncation toward zero, as C++ (and Caffe2).
// Floating point: IEEE (x / 0 is +-Inf, 0 / 0 NaN). docs/nan_inf.md.
#pragma once

#include <type_traits>

#if defined(__CUDACC__)
#define HN_DIVIDE_HD __host__ __device__
#else
#define HN_DIVIDE_HD
#endif

namespace hetnet::math {

template <typename T>
HN_DIVIDE_HD inline T Divide(T x, T y) {
  if constexpr (std::is_integral<T>::value) {
    if (y == 0) return T(0);
    if constexpr (std::is_signed<T>::value) {
      using U = std::make_unsigned_t<T>;
      if (y == T(-1)) return static_cast<T>(U(0) - static_cast<U>(x));  // wraps for lowest
    }
  }
  return x / y;
}

}  // namespace hetnet::math
