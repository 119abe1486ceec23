// Small helpers of the CPU operators added for ONNX import (cumsum_op, range_onehot_ops, select_ops,
// scatter_ops): scalar and index reads whose errors name the operator and the blob, and a dispatch
// over the numeric dtypes, and the shape inference of a binary op with numpy broadcasting.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/half.h"
#include "core/op_schema.h"
#include "core/operator.h"
#include "device/broadcast.h"
#include "operators/dtype_dispatch.h"

namespace hetnet {

// Output 0 of a binary op whose inputs 0 and 1 broadcast numpy-style: their broadcast shape, input
// 0's dtype (unknown when either shape is, or they do not broadcast: the kernel says why).
inline std::vector<TensorInfo> NumpyBroadcastInference(const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
  std::vector<int64_t> out;
  if (!in[0].known || !in[1].known || !math::NumpyBroadcastShape({in[0].dims, in[1].dims}, &out))
    return {TensorInfo::Unknown()};
  return {TensorInfo::Of(out, in[0].dtype)};
}

// Calls f(T{}) for the numeric dtypes (operators/dtype_dispatch.h); refuses the rest naming input i of op.
template <typename G>
decltype(auto) DispatchArithmetic(const OperatorBase& op, DataType t, int i, G&& f) {
  return DispatchRealOrIntegerType(op.def(), t, i, static_cast<G&&>(f));
}

// Element k of a numeric tensor as double (float16, bfloat16 and bool included).
inline double ElementAsDouble(const OperatorBase& op, const Tensor& t, int i, int64_t k) {
  if (t.dtype() == DataType::Float16) return HalfToFloat(t.data<Half>()[k]);
  if (t.dtype() == DataType::BFloat16) return BFloat16ToFloat(t.data<BFloat16>()[k]);
  if (t.dtype() == DataType::Bool) return t.data<bool>()[k] ? 1.0 : 0.0;
  return DispatchArithmetic(op, t.dtype(), i, [&](auto zero) {
    return static_cast<double>(t.data<decltype(zero)>()[k]);
  });
}

// The bytes of value v as one element of dtype t (float16/bfloat16 rounded, bool v != 0, integers truncated);
// `out` holds at least 8 bytes. Strings are refused naming op.
inline void EncodeAs(const OperatorBase& op, DataType t, double v, void* out) {
  HN_ENFORCE(t != DataType::String, op.type(), ": a string output is not supported");
  DispatchDataType(t, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same<T, Half>::value) {
      const Half h = FloatToHalf(static_cast<float>(v));
      std::memcpy(out, &h, sizeof h);
    } else if constexpr (std::is_same<T, BFloat16>::value) {
      const BFloat16 h = FloatToBFloat16(static_cast<float>(v));
      std::memcpy(out, &h, sizeof h);
    } else if constexpr (!std::is_same<T, std::string>::value) {
      const T x = static_cast<T>(v);
      std::memcpy(out, &x, sizeof x);
    }
  });
}

// Input i as one number: it must hold exactly one element.
inline double ScalarInput(const OperatorBase& op, int i) {
  const Tensor& t = op.InputTensor(i);
  HN_ENFORCE(t.numel() == 1, op.type(), ": input ", i, " ('", op.def().input(i), "') must hold one value (a scalar), "
             "but has shape ", t.ShapeString());
  return ElementAsDouble(op, t, i, 0);
}

// Input i as an int32 / int64 index tensor (kInvalidArgument otherwise).
inline void EnforceIndexInput(const OperatorBase& op, int i) {
  const DataType t = op.InputTensor(i).dtype();
  HN_ENFORCE(t == DataType::Int32 || t == DataType::Int64, op.type(), ": input ", i, " ('", op.def().input(i),
             "') is ", DataTypeName(t), " but int32 or int64 indices are required");
}
inline int64_t IndexAt(const Tensor& t, int64_t k) {
  return t.dtype() == DataType::Int64 ? t.data<int64_t>()[k] : t.data<int32_t>()[k];
}

}  // namespace hetnet
