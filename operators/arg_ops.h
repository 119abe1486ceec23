// ArgMax / ArgMin(X) -> indices (int64), Caffe2's: the position of the largest / smallest entry along
// `axis` (default -1), the first one on ties; `keepdims` (default 1) keeps that dim as 1, otherwise it
// is removed. NaN counts as larger and smaller than everything (the first NaN wins, as numpy). X:
// float32, float64, int32 or int64. No gradient.
#pragma once

#include "core/operator.h"
#include "operators/host_device.h"

namespace hetnet {

// X viewed as [outer, n, inner]; output element j (of outer * inner) reduces over n.
template <bool IsMax, typename T>
HN_HOST_DEVICE inline int64_t ArgReduceAt(const T* x, int64_t n, int64_t inner, int64_t j) {
  const T* p = x + (j / inner) * n * inner + j % inner;
  T best = p[0];
  int64_t at = 0;
  for (int64_t k = 1; k < n && best == best; ++k) {  // stops at a NaN
    const T v = p[k * inner];
    if (v != v || (IsMax ? v > best : v < best)) {
      best = v;
      at = k;
    }
  }
  return at;
}

template <bool IsMax, typename T, class Context>
void ArgReduce(int64_t outer, int64_t n, int64_t inner, const T* x, int64_t* y, Context* ctx);

struct ArgGeom {
  int64_t outer = 1, n = 1, inner = 1;
  std::vector<int64_t> out_shape;
};
ArgGeom MakeArgGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x);

template <class Context, bool IsMax>
class ArgReduceOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const ArgGeom g = MakeArgGeom(this->def(), X.shape());
    Tensor* Y = this->Output(0, g.out_shape, DataType::Int64);
    int64_t* y = Y->template mutable_data<int64_t>();
    switch (X.dtype()) {
      case DataType::Float: return ArgReduce<IsMax, float, Context>(g.outer, g.n, g.inner, X.template data<float>(), y, &this->context_);
      case DataType::Double: return ArgReduce<IsMax, double, Context>(g.outer, g.n, g.inner, X.template data<double>(), y, &this->context_);
      case DataType::Int32: return ArgReduce<IsMax, int32_t, Context>(g.outer, g.n, g.inner, X.template data<int32_t>(), y, &this->context_);
      case DataType::Int64: return ArgReduce<IsMax, int64_t, Context>(g.outer, g.n, g.inner, X.template data<int64_t>(), y, &this->context_);
      default:
        HN_THROW(kInvalidArgument, this->type(), ": unsupported dtype ", DataTypeName(X.dtype()), " of input 0 ('",
                 this->def().input(0), "'); float32, float64, int32 and int64 are supported");
    }
  }
};

}  // namespace hetnet
