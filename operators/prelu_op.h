// PRelu(X, Slope) -> Y = X if X > 0 else slope[c] * X, c the channel (dim 1 for order "NCHW", the last dim
// for "NHWC"); a one-element Slope is shared by all channels. In place (Y == X) allowed.
// PReluGradient(Y, dY, X, Slope) -> dX, dSlope (Caffe2's input order).
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// Element i has channel (i / inner) % C; C == 1 means a shared slope.
template <class Context>
void PReluKernel(int64_t n, int64_t C, int64_t inner, const float* x, const float* w, float* y, Context* ctx);
// dx = x > 0 ? dy : w[c] * dy; dw[c] = sum over x <= 0 of dy * x (dw has C elements).
template <class Context>
void PReluGradientKernel(int64_t n, int64_t C, int64_t inner, const float* x, const float* w, const float* dy,
                         float* dx, float* dw, Context* ctx);

struct PReluDims {
  int64_t C, inner;
};

inline PReluDims ComputePReluDims(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int64_t slope_numel,
                                  int slope_input) {
  const std::string order = ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW");
  HN_ENFORCE(order == "NCHW" || order == "NHWC", def.type(), ": order must be NCHW or NHWC, got '", order, "'");
  HN_ENFORCE(x.size() >= (order == "NCHW" ? 2u : 1u), def.type(), ": input 0 ('", def.input(0), "') has shape ",
             ShapeToString(x), " but needs a channel dim for order ", order);
  const int64_t channels = order == "NCHW" ? x[1] : x.back();
  const int64_t inner = order == "NCHW" ? ProdDims(x, 2, x.size()) : 1;
  HN_ENFORCE(slope_numel == 1 || slope_numel == channels, def.type(), ": input ", slope_input, " ('",
             def.input(slope_input), "') has ", slope_numel, " elements but input 0 ('", def.input(0), "') of shape ",
             ShapeToString(x), " has ", channels, " channels (", order, "); give one slope per channel or one shared");
  return PReluDims{slope_numel == 1 ? 1 : channels, slope_numel == 1 ? 1 : inner};
}

template <class Context>
class PReluOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& W = this->Input(1);
    EnforceFloatInput(this->def(), X, 0);
    EnforceFloatInput(this->def(), W, 1);
    const PReluDims d = ComputePReluDims(this->def(), X.shape(), W.numel(), 1);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    PReluKernel<Context>(X.numel(), d.C, d.inner, X.template data<float>(), W.template data<float>(),
                         Y->template mutable_data<float>(), &this->context_);
  }
};

template <class Context>
class PReluGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& dY = this->Input(1);
    const Tensor& X = this->Input(2);
    const Tensor& W = this->Input(3);
    for (int i = 1; i < 4; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    EnforceSameShape(this->def(), dY, 1, X, 2);
    const PReluDims d = ComputePReluDims(this->def(), X.shape(), W.numel(), 3);
    Tensor* dW = this->Output(1, W.shape(), DataType::Float);
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    PReluGradientKernel<Context>(X.numel(), d.C, d.inner, X.template data<float>(), W.template data<float>(),
                                 dY.template data<float>(), dX->template mutable_data<float>(),
                                 dW->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
