// Sigmoid and Tanh (and their gradients, which read the forward output Y): one op template over a
// kernel function; kernels per device in activation_ops.{cc,cu}.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

template <class Context> void SigmoidKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void TanhKernel(int64_t n, const float* x, float* y, Context* ctx);
// dx from y (the forward output) and dy.
template <class Context> void SigmoidGradientKernel(int64_t n, const float* y, const float* dy, float* dx, Context* ctx);
template <class Context> void TanhGradientKernel(int64_t n, const float* y, const float* dy, float* dx, Context* ctx);

template <class Context, void (*Kernel)(int64_t, const float*, float*, Context*)>
class UnaryFloatOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    Kernel(X.numel(), X.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }
};

template <class Context, void (*Kernel)(int64_t, const float*, const float*, float*, Context*)>
class UnaryFloatGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& Y = this->Input(0);
    const Tensor& dY = this->Input(1);
    HN_ENFORCE(Y.shape() == dY.shape(), this->type(), ": input 0 ('", this->def().input(0), "') has shape ",
               Y.ShapeString(), " but input 1 ('", this->def().input(1), "') has shape ", dY.ShapeString());
    HN_ENFORCE(Y.dtype() == DataType::Float && dY.dtype() == DataType::Float, this->type(),
               ": float32 inputs required, got ", DataTypeName(Y.dtype()), " and ", DataTypeName(dY.dtype()));
    Tensor* dX = this->Output(0, Y.shape(), DataType::Float);
    Kernel(Y.numel(), Y.template data<float>(), dY.template data<float>(), dX->template mutable_data<float>(),
           &this->context_);
  }
};

template <class Context> using SigmoidOp = UnaryFloatOp<Context, &SigmoidKernel<Context>>;
template <class Context> using TanhOp = UnaryFloatOp<Context, &TanhKernel<Context>>;
template <class Context> using SigmoidGradientOp = UnaryFloatGradientOp<Context, &SigmoidGradientKernel<Context>>;
template <class Context> using TanhGradientOp = UnaryFloatGradientOp<Context, &TanhGradientKernel<Context>>;

}  // namespace hetnet
