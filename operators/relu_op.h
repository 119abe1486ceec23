// Relu: Y = max(X, 0); ReluGradient: dX = dY * (Y > 0). Shape logic here, kernels per device.
#pragma once

#include "core/operator.h"

namespace hetnet {

template <class Context> void ReluKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void ReluGradientKernel(int64_t n, const float* y, const float* dy, float* dx, Context* ctx);

template <class Context>
class ReluOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    ReluKernel<Context>(X.numel(), X.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }
};

template <class Context>
class ReluGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& Y = this->Input(0);
    const Tensor& dY = this->Input(1);
    HN_ENFORCE(Y.shape() == dY.shape(), "Y ", Y.ShapeString(), " and dY ", dY.ShapeString(), " differ in shape");
    Tensor* dX = this->Output(0, Y.shape(), DataType::Float);
    ReluGradientKernel<Context>(Y.numel(), Y.template data<float>(), dY.template data<float>(),
                                dX->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
