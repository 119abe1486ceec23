// BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (see bitwise_ops.h).
#include "operators/bitwise_ops.h"

#include <cstdint>

#include "device/broadcast.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

template <BitwiseFn F, typename T>
T Apply(T a, T b) {
  if constexpr (F == BitwiseFn::kAnd) return static_cast<T>(a & b);
  else if constexpr (F == BitwiseFn::kOr) return static_cast<T>(a | b);
  else if constexpr (F == BitwiseFn::kXor) return static_cast<T>(a ^ b);
  else return static_cast<T>(~a);
}

}  // namespace

template <BitwiseFn F>
void BitwiseOp<F>::RunOnDevice() {
  const Tensor& A = Input(0);
  const auto& d = def();
  if constexpr (F == BitwiseFn::kNot) {
    Tensor* Y = Output(0, A.shape(), A.dtype());
    DispatchIntegerType(def(), A.dtype(), 0, [&](auto zero) {
      using T = decltype(zero);
      const T* a = A.template data<T>();
      T* y = Y->template mutable_data<T>();
      for (int64_t i = 0; i < A.numel(); ++i) y[i] = Apply<F, T>(a[i], a[i]);
    });
  } else {
    const Tensor& B = Input(1);
    HN_ENFORCE(A.dtype() == B.dtype(), type(), ": input 0 ('", d.input(0), "') is ", DataTypeName(A.dtype()),
               " but input 1 ('", d.input(1), "') is ", DataTypeName(B.dtype()), "; they must have one dtype");
    std::vector<int64_t> out;
    HN_ENFORCE(math::NumpyBroadcastShape({A.shape(), B.shape()}, &out), type(), ": ",
               math::DescribeShapes({d.input(0), d.input(1)}, {A.shape(), B.shape()}),
               " do not broadcast (numpy rule: aligned from the last dim, each dim equal or 1)");
    const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {A.shape(), B.shape()});
    Tensor* C = Output(0, out, A.dtype());
    DispatchIntegerType(def(), A.dtype(), 0, [&](auto zero) {
      using T = decltype(zero);
      const T* a = A.template data<T>();
      const T* b = B.template data<T>();
      T* c = C->template mutable_data<T>();
      math::ForEachBroadcastRow(ix, C->numel(), [&](int64_t base, const int64_t* off, int64_t inner, const int64_t* step) {
        for (int64_t q = 0; q < inner; ++q) c[base + q] = Apply<F, T>(a[off[0] + q * step[0]], b[off[1] + q * step[1]]);
      });
    });
  }
}

#define HN_BITWISE_BINARY(Name, Fn, Sym)                                                                        \
  OPERATOR_SCHEMA(Name).NumInputs(2).NumOutputs(1).TensorInference(NumpyBroadcastInference).SetDoc(                 \
      "C = A " Sym " B, elementwise (ONNX's " #Name "), A and B of one integer dtype (int8/16/32/64, "         \
      "uint8/16), shapes broadcast numpy-style. CPU only; no gradient.");                                     \
  REGISTER_CPU_OPERATOR(Name, BitwiseOp<BitwiseFn::Fn>);
HN_BITWISE_BINARY(BitwiseAnd, kAnd, "&")
HN_BITWISE_BINARY(BitwiseOr, kOr, "|")
HN_BITWISE_BINARY(BitwiseXor, kXor, "^")
#undef HN_BITWISE_BINARY
OPERATOR_SCHEMA(BitwiseNot).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = ~X, elementwise (ONNX's BitwiseNot), integer dtypes (int8/16/32/64, uint8/16). CPU only.");
REGISTER_CPU_OPERATOR(BitwiseNot, BitwiseOp<BitwiseFn::kNot>);

}  // namespace hetnet
