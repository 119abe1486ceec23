// NHWC2NCHW / NCHW2NHWC: move the channel dim between last and 1 ([N, d1..dk, C] <-> [N, C, d1..dk]),
// for inputs of 3 to kMaxDims dims and any non-string dtype. Each op's gradient is the other one.
#pragma once

#include "core/operator.h"
#include "operators/transpose_op.h"

namespace hetnet {

// The Transpose axes of the switch: to NCHW [0, n-1, 1, .., n-2]; to NHWC [0, 2, .., n-1, 1].
inline std::vector<int> OrderSwitchAxes(int ndim, bool to_nchw) {
  std::vector<int> axes{0};
  if (to_nchw) axes.push_back(ndim - 1);
  for (int i = to_nchw ? 1 : 2; i < (to_nchw ? ndim - 1 : ndim); ++i) axes.push_back(i);
  if (!to_nchw) axes.push_back(1);
  return axes;
}

inline void CheckOrderSwitchRank(const caffe2::OperatorDef& def, const std::vector<int64_t>& dims) {
  HN_ENFORCE(dims.size() >= 3, def.type(), ": input 0 ('", def.input(0), "') must have at least 3 dims, has shape ",
             ShapeToString(dims));
}

template <class Context, bool kToNCHW>
class OrderSwitchOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    CheckOrderSwitchRank(this->def(), X.shape());
    const size_t item = PlainItemSize(this->def(), X, 0);
    const std::vector<int> axes = OrderSwitchAxes(X.ndim(), kToNCHW);
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
