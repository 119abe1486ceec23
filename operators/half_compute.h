// Reading and writing float32/float64/float16/bfloat16 tensor elements in a compute type C (float
// for float32, float16 and bfloat16, double for float64): the CPU kernels added for ONNX's attention ops
// (attention_op, rotary_embedding_op) compute in C and store in the tensor's own type T.
#pragma once

#include <limits>
#include <type_traits>

#include "core/bfloat16.h"
#include "core/half.h"

namespace hetnet {

template <typename C, typename T>
C ToCompute(const T& v) {
  if constexpr (std::is_same<T, Half>::value) return HalfToFloat(v);
  else if constexpr (std::is_same<T, BFloat16>::value) return BFloat16ToFloat(v);
  else return static_cast<C>(v);
}

template <typename T, typename C>
T FromCompute(C v) {
  if constexpr (std::is_same<T, Half>::value) return FloatToHalf(static_cast<float>(v));
  else if constexpr (std::is_same<T, BFloat16>::value) return FloatToBFloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

// v rounded to T's precision (where a reference computes in the inputs' dtype).
template <typename T, typename C>
C RoundTo(C v) {
  return ToCompute<C>(FromCompute<T, C>(v));
}

// v as C, beyond C's range as +-infinity (a plain cast of an out-of-range double to float is undefined).
template <typename C>
C NarrowTo(double v) {
  if constexpr (std::is_same<C, float>::value) {
    if (v > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
    if (v < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::infinity();
  }
  return static_cast<C>(v);
}

// The 16-bit float types (stored narrower than they are computed).
template <typename T>
constexpr bool kIs16BitFloat = std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;

}  // namespace hetnet
