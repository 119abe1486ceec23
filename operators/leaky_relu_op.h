// LeakyRelu: Y = X if X > 0 else alpha * X (arg alpha, default 0.01); in place allowed.
// LeakyReluGradient(Y, dY) -> dX = dY if Y > 0 else alpha * dY (Caffe2 reads the output Y).
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

template <class Context> void LeakyReluKernel(int64_t n, float alpha, const float* x, float* y, Context* ctx);
template <class Context>
void LeakyReluGradientKernel(int64_t n, float alpha, const float* y, const float* dy, float* dx, Context* ctx);

template <class Context>
class LeakyReluOp final : public Operator<Context> {
 public:
  LeakyReluOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), alpha_(this->template GetSingleArgument<float>("alpha", 0.01f)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    LeakyReluKernel<Context>(X.numel(), alpha_, X.template data<float>(), Y->template mutable_data<float>(),
                             &this->context_);
  }

 private:
  float alpha_;
};

template <class Context>
class LeakyReluGradientOp final : public Operator<Context> {
 public:
  LeakyReluGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), alpha_(this->template GetSingleArgument<float>("alpha", 0.01f)) {}
  void RunOnDevice() override {
    const Tensor& Y = this->Input(0);
    const Tensor& dY = this->Input(1);
    EnforceFloatInput(this->def(), Y, 0);
    EnforceFloatInput(this->def(), dY, 1);
    EnforceSameShape(this->def(), Y, 0, dY, 1);
    Tensor* dX = this->Output(0, Y.shape(), DataType::Float);
    LeakyReluGradientKernel<Context>(Y.numel(), alpha_, Y.template data<float>(), dY.template data<float>(),
                                     dX->template mutable_data<float>(), &this->context_);
  }

 private:
  float alpha_;
};

}  // namespace hetnet
