// Gradient clipping by global norm, Caffe2's pattern: SumSqrElements(g_i) -> Sum -> Sqrt -> norm;
// ClipTensorByScaling(g_i, norm) -> g_i * threshold / norm when norm > threshold (else g_i).
//  - SumSqrElements: Y (float, shape []) = sum X^2 (arg average: divide by the element count).
//  - Sqrt: Y = sqrt(X), elementwise.
//  - ClipTensorByScaling: inputs X, val (one float, read on CPU), optional additional_threshold
//    (one float on CPU, multiplies threshold); arg threshold. In place allowed.
//  - Sign: Y = sign(X) (-1, 0, 1), used by L1 weight decay.
#pragma once

#include "core/operator.h"
#include "device/math.h"
#include "operators/host_device.h"

namespace hetnet {

// Sign in {-1, 0, 1} (0 for NaN), for the CPU loop and the CUDA kernel.
HN_HOST_DEVICE inline float SignValue(float x) { return static_cast<float>((x > 0.f) - (x < 0.f)); }

template <class Context> void SumSqrKernel(int64_t n, const float* x, float* y, float scale, Context* ctx);
template <class Context> void SqrtKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void SignKernel(int64_t n, const float* x, float* y, Context* ctx);

inline void CheckFloat(const OperatorBase& op, const Tensor& X, int i) {
  HN_ENFORCE(X.dtype() == DataType::Float, op.type(), ": input ", i, " ('", op.def().input(i), "') is ",
             X.DebugString(), ", float32 is required");
}

template <class Context>
class SumSqrElementsOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    CheckFloat(*this, X, 0);
    const bool average = this->template GetSingleArgument<int>("average", 0) != 0;
    const float scale = average && X.numel() > 0 ? 1.f / static_cast<float>(X.numel()) : 1.f;
    Tensor* Y = this->Output(0, {}, DataType::Float);
    SumSqrKernel<Context>(X.numel(), X.template data<float>(), Y->template mutable_data<float>(), scale, &this->context_);
  }
};

// Sqrt and Sign: float X -> Y of X's shape through `Kernel`; they differ only in the kernel.
template <class Context, void (*Kernel)(int64_t, const float*, float*, Context*)>
class FloatUnaryOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    CheckFloat(*this, X, 0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    Kernel(X.numel(), X.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }
};
template <class Context> using SqrtOp = FloatUnaryOp<Context, SqrtKernel<Context>>;
template <class Context> using SignOp = FloatUnaryOp<Context, SignKernel<Context>>;

template <class Context>
class ClipTensorByScalingOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& val = this->Input(1);
    CheckFloat(*this, X, 0);
    CheckFloat(*this, val, 1);
    HN_ENFORCE(val.numel() == 1, "ClipTensorByScaling: val ('", this->def().input(1), "') must be one float, is ",
               val.DebugString());
    float threshold = this->template GetSingleArgument<float>("threshold", 0.f);
    HN_ENFORCE(threshold > 0, "ClipTensorByScaling: threshold must be positive, is ", threshold);
    if (this->InputSize() > 2) threshold *= this->Input(2).template data<float>()[0];
    const float v = val.template data<float>()[0];
    const Tensor Xv = X;
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    const float scale = v > threshold ? threshold / v : 1.f;
    if (scale == 1.f && Y->template mutable_data<float>() == Xv.template data<float>()) return;
    math::Scale<Context>(X.numel(), scale, Xv.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
