// Reading and writing float32/float64/float16/bfloat16 tensor elements in a compute type C (float
// for float32, float16 and bfloat16, double for float64): the CPU kernels added for ONNX's attention ops
// (attention_op, rotary_embedding_op) compute in C and store in the tensor's own type T.
#pragma once

#include <limits>
#include <type_traits>
#include <vector>

#include "core/bfloat16.h"
#include "core/error.h"
#include "core/half.h"
#include "core/operator.h"

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

// Inputs `same` of `op` must have input 0's dtype: refused naming both blobs.
inline void EnforceOneDtype(const OperatorBase& op, const std::vector<int>& same) {
  const DataType t = op.InputTensor(0).dtype();
  const auto& def = op.def();
  for (int i : same)
    HN_ENFORCE(op.InputTensor(i).dtype() == t, def.type(), ": input ", i, " ('", def.input(i), "') is ",
               DataTypeName(op.InputTensor(i).dtype()), " but input 0 ('", def.input(0), "') is ", DataTypeName(t),
               "; they must have one dtype");
}

// The float kernels' entry: EnforceOneDtype(op, same), then f(T{}, C{}) runs with T input 0's C++
// type and C the type computed in (float for float16 and bfloat16); other dtypes are refused.
template <typename F>
void DispatchFloatCompute(const OperatorBase& op, const std::vector<int>& same, F&& f) {
  EnforceOneDtype(op, same);
  const DataType t = op.InputTensor(0).dtype();
  switch (t) {
    case DataType::Float: return f(float{}, float{});
    case DataType::Double: return f(double{}, double{});
    case DataType::Float16: return f(Half{}, float{});
    case DataType::BFloat16: return f(BFloat16{}, float{});
    default:
      HN_THROW(kInvalidArgument, op.def().type(), ": input 0 ('", op.def().input(0), "') is ", DataTypeName(t),
               "; float32, float64, float16 or bfloat16 is required");
  }
}

// The same for kernels of float32 and float64 only: f(T{}).
template <typename F>
void DispatchFloat32Or64(const OperatorBase& op, const std::vector<int>& same, F&& f) {
  EnforceOneDtype(op, same);
  const DataType t = op.InputTensor(0).dtype();
  if (t == DataType::Float) return f(float{});
  HN_ENFORCE(t == DataType::Double, op.def().type(), ": input 0 ('", op.def().input(0), "') is ", DataTypeName(t),
             "; float32 or float64 is required");
  f(double{});
}

}  // namespace hetnet
