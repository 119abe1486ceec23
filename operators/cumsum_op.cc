#include "operators/cumsum_op.h"

#include <type_traits>

#include "operators/cnn_op_utils.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {
// The accumulator: T itself for floats, the unsigned type of T's width for integers (sums wrap).
template <typename T, bool = std::is_integral<T>::value>
struct SumType {
  using type = T;
};
template <typename T>
struct SumType<T, true> {
  using type = std::make_unsigned_t<T>;
};
// acc + v or acc * v, wrapping for integers (products in uint64: no promotion to a signed int).
template <typename Acc>
Acc Combine(Acc acc, Acc v, bool product) {
  if constexpr (std::is_integral<Acc>::value) {
    const uint64_t a = acc, b = v;
    return static_cast<Acc>(product ? a * b : a + b);
  } else {
    return product ? acc * v : acc + v;
  }
}

}  // namespace

CumSumOp::CumSumOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      exclusive_(GetSingleArgument<int>("exclusive", 0) != 0),
      reverse_(GetSingleArgument<int>("reverse", 0) != 0),
      product_(def.type() == "CumProd") {}

void CumSumOp::RunOnDevice() {
  const Tensor& X = Input(0);
  EnforceIndexInput(*this, 1);
  const Tensor& A = Input(1);
  HN_ENFORCE(A.numel() == 1, type(), ": input 1 ('", def().input(1), "') must hold one axis, but has shape ",
             A.ShapeString());
  HN_ENFORCE(X.ndim() >= 1, type(), ": input 0 ('", def().input(0), "') must have at least one dim");
  const int64_t a = IndexAt(A, 0);
  HN_ENFORCE(a >= -X.ndim() && a < X.ndim(), type(), ": axis ", a, " (input 1, '", def().input(1),
             "') is out of range for input 0 ('", def().input(0), "') with ", X.ndim(), " dims");
  const int axis = static_cast<int>(a < 0 ? a + X.ndim() : a);
  const int64_t outer = ProdDims(X.shape(), 0, axis), n = X.dim(axis),
                inner = ProdDims(X.shape(), axis + 1, X.shape().size());
  Tensor* Y = Output(0, X.shape(), X.dtype());
  DispatchArithmetic(*this, X.dtype(), 0, [&](auto zero) {
    using T = decltype(zero);
    using Acc = typename SumType<T>::type;
    const T* x = X.template data<T>();
    T* y = Y->template mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Acc acc = product_ ? 1 : 0;
        for (int64_t s = 0; s < n; ++s) {
          const int64_t k = (o * n + (reverse_ ? n - 1 - s : s)) * inner + i;
          const Acc v = static_cast<Acc>(x[k]);
          if (!exclusive_) acc = Combine(acc, v, product_);
          y[k] = static_cast<T>(acc);
          if (exclusive_) acc = Combine(acc, v, product_);
        }
      }
  });
}

namespace {
std::vector<TensorInfo> LikeInput0(const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
  return {in[0].known ? TensorInfo::Of(in[0].dims, in[0].dtype) : TensorInfo::Unknown()};
}
}  // namespace

OPERATOR_SCHEMA(CumSum)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(LikeInput0)
    .SetDoc("ONNX's CumSum(X, axis) -> Y: running sums along axis (input 1: one int32/int64 value in [-rank, rank)); "
            "args exclusive and reverse (default 0). X float32/64, int8/16/32/64 or uint8/16; integer sums wrap. "
            "CPU only; no gradient.");
OPERATOR_SCHEMA(CumProd).NumInputs(2).NumOutputs(1).TensorInference(LikeInput0)
    .SetDoc("ONNX's CumProd(X, axis) -> Y: running products along axis, as CumSum (exclusive products start at 1). "
            "Integer products wrap. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(CumSum, CumSumOp);
REGISTER_CPU_OPERATOR(CumProd, CumSumOp);

}  // namespace hetnet
