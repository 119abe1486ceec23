// Adagrad (Caffe2): inputs param, moment, grad, lr; outputs param, moment (in place). Args epsilon
// (1e-5), decay (1.0):  h' = decay * h + g^2;  param += lr * g / (sqrt(h') + eps)  (lr negative).
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/host_device.h"

namespace hetnet {

// Element i of the step (CPU loop and CUDA kernel); h is updated in place.
HN_HOST_DEVICE inline void AdagradElement(int64_t i, float* w, const float* g, float* h, float eps, float decay,
                                          const float* lr) {
  const float hi = h[i] = decay * h[i] + g[i] * g[i];
  w[i] += lr[0] * g[i] / (sqrtf(hi) + eps);
}

template <class Context>
void AdagradKernel(int64_t n, float* w, const float* g, float* h, float eps, float decay, const float* lr,
                   Context* ctx);

template <class Context>
class AdagradOp final : public Operator<Context> {
 public:
  AdagradOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)),
        decay_(this->template GetSingleArgument<float>("decay", 1.f)) {}
  void RunOnDevice() override {
    const Tensor& g = this->Input(2);
    const Tensor& lr = this->Input(3);
    for (int i : {0, 1}) {
      HN_ENFORCE(this->Input(i).shape() == g.shape() && this->Input(i).dtype() == DataType::Float, "Adagrad: input ",
                 i, " ('", this->def().input(i), "') is ", this->Input(i).DebugString(), " but grad is ",
                 g.DebugString());
      HN_ENFORCE(this->IsInputOutputAlias(i, i), "Adagrad: output ", i, " must be input ", i, " ('",
                 this->def().input(i), "'), updated in place");
    }
    HN_ENFORCE(lr.numel() == 1, "Adagrad: lr must be one float");
    AdagradKernel<Context>(g.numel(), this->Output(0)->template mutable_data_existing<float>(),
                           g.template data<float>(), this->Output(1)->template mutable_data_existing<float>(), eps_,
                           decay_, lr.template data<float>(), &this->context_);
  }

 private:
  float eps_, decay_;
};

}  // namespace hetnet
