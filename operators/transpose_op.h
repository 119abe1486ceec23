// Transpose(X) -> Y with Y.dim(i) = X.dim(axes[i]); `axes` (a permutation of 0..ndim-1) defaults to the
// reversed dims. Any non-string dtype (elements moved by size). Gradient: Transpose with the inverse axes.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// y[i] = x[src.Offset(i)] for i < n, elements of item_size bytes (1, 2, 4 or 8).
template <class Context>
void TransposeKernel(const StridedIndex& src, int64_t n, size_t item_size, const void* x, void* y, Context* ctx);

inline std::vector<int> TransposeAxes(const caffe2::OperatorDef& def, int ndim) {
  std::vector<int> axes = ArgumentHelper(def).GetRepeatedArgument<int>("axes");
  if (axes.empty()) {
    for (int i = ndim - 1; i >= 0; --i) axes.push_back(i);
    return axes;
  }
  std::vector<bool> seen(ndim, false);
  bool ok = static_cast<int>(axes.size()) == ndim;
  for (int a : axes) {
    ok = ok && a >= 0 && a < ndim && !seen[a];
    if (ok) seen[a] = true;
  }
  std::vector<int64_t> shown(axes.begin(), axes.end());
  HN_ENFORCE(ok, def.type(), ": axes ", ShapeToString(shown), " are not a permutation of the ", ndim,
             " dims of input 0 ('", def.input(0), "')");
  return axes;
}

inline std::vector<int64_t> TransposeShape(const std::vector<int64_t>& x, const std::vector<int>& axes) {
  std::vector<int64_t> y;
  for (int a : axes) y.push_back(x[a]);
  return y;
}

template <class Context>
class TransposeOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const size_t item = PlainItemSize(this->def(), X, 0);
    const std::vector<int> axes = TransposeAxes(this->def(), X.ndim());
    const std::vector<int64_t> xst = RowMajorStrides(X.shape());
    std::vector<int64_t> st;
    for (int a : axes) st.push_back(xst[a]);
    const std::vector<int64_t> y_shape = TransposeShape(X.shape(), axes);
    const StridedIndex src = MakeStridedIndex(this->def(), y_shape, st);
    Tensor* Y = this->Output(0, y_shape, X.dtype());
    TransposeKernel<Context>(src, X.numel(), item, X.raw_data(), Y->raw_mutable_data(X.dtype()), &this->context_);
  }
};

}  // namespace hetnet
