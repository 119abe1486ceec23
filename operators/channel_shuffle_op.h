// ChannelShuffle(X) -> Y: the C channels (dim 1 for order "NCHW", the last dim for "NHWC") viewed as
// [group, C / group] and transposed: Y channel k * group + g = X channel g * (C / group) + k.
// ChannelShuffleGradient(dY) -> dX is the inverse shuffle (group C / group). float32.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// Element i of Y (channel (i / inner) % C) reads X's channel per the shuffle with `group` groups.
template <class Context>
void ChannelShuffleKernel(int64_t n, int64_t C, int64_t inner, int64_t group, const float* x, float* y, Context* ctx);

struct ShuffleDims {
  int64_t C, inner;
};

inline ShuffleDims ComputeShuffleDims(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int group) {
  const std::string order = ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW");
  HN_ENFORCE(order == "NCHW" || order == "NHWC", def.type(), ": order must be NCHW or NHWC, got '", order, "'");
  HN_ENFORCE(x.size() >= 2, def.type(), ": input 0 ('", def.input(0), "') has shape ", ShapeToString(x),
             " but needs at least [N, C]");
  const int64_t C = order == "NCHW" ? x[1] : x.back();
  HN_ENFORCE(group > 0 && C % group == 0, def.type(), ": group ", group, " does not divide the ", C,
             " channels of input 0 ('", def.input(0), "') of shape ", ShapeToString(x), " (", order, ")");
  return ShuffleDims{C, order == "NCHW" ? ProdDims(x, 2, x.size()) : 1};
}

template <class Context, bool kGradient>
class ChannelShuffleOpT final : public Operator<Context> {
 public:
  ChannelShuffleOpT(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), group_(this->template GetSingleArgument<int>("group", 1)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    const ShuffleDims d = ComputeShuffleDims(this->def(), X.shape(), group_);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    ChannelShuffleKernel<Context>(X.numel(), d.C, d.inner, kGradient ? d.C / group_ : group_,
                                  X.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }

 private:
  int group_;
};

template <class Context> using ChannelShuffleOp = ChannelShuffleOpT<Context, false>;
template <class Context> using ChannelShuffleGradientOp = ChannelShuffleOpT<Context, true>;

}  // namespace hetnet
