// WeightedSum: Y = w0 * X0 + w1 * X1 + ... (inputs X0, w0, X1, w1, ...; each w a float tensor of
// one element on the op's device); Y may be X0 (in place), as Caffe2's. Used by SGD and weight decay.
#pragma once

#include "core/operator.h"
#include "operators/host_device.h"

namespace hetnet {

// One element of y = a * x (accumulate: y += a * x), for the CPU loop and the CUDA kernel.
// y[i] is read only when accumulating (a fresh output holds garbage).
HN_HOST_DEVICE inline void WeightedAxpyElement(int64_t i, float a, const float* x, float* y, bool accumulate) {
  y[i] = accumulate ? y[i] + a * x[i] : a * x[i];
}

// y = w[0] * x (accumulate: y += w[0] * x); w is a device pointer.
template <class Context>
void WeightedAxpyKernel(int64_t n, const float* w, const float* x, float* y, bool accumulate, Context* ctx);

template <class Context>
class WeightedSumOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const int n = this->InputSize();
    HN_ENFORCE(n % 2 == 0 && n > 0, "WeightedSum: inputs come in pairs (X, weight), got ", n);
    const Tensor X0 = this->Input(0);  // a view, valid if Y replaces X0's storage
    for (int i = 0; i < n; i += 2) {
      const Tensor& X = this->Input(i);
      const Tensor& w = this->Input(i + 1);
      HN_ENFORCE(X.dtype() == DataType::Float && X.shape() == X0.shape(), "WeightedSum: input ", i, " ('",
                 this->def().input(i), "') is ", X.DebugString(), " but input 0 ('", this->def().input(0), "') is ",
                 X0.DebugString());
      HN_ENFORCE(w.dtype() == DataType::Float && w.numel() == 1, "WeightedSum: weight input ", i + 1, " ('",
                 this->def().input(i + 1), "') must be one float, is ", w.DebugString());
    }
    Tensor* Y = this->Output(0, X0.shape(), DataType::Float);
    float* y = Y->template mutable_data<float>();
    WeightedAxpyKernel<Context>(X0.numel(), this->Input(1).template data<float>(), X0.template data<float>(), y, false,
                                &this->context_);
    for (int i = 2; i < n; i += 2)
      WeightedAxpyKernel<Context>(X0.numel(), this->Input(i + 1).template data<float>(),
                                  this->Input(i).template data<float>(), y, true, &this->context_);
  }
};

}  // namespace hetnet
