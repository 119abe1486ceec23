// Adam (Caffe2): inputs param, moment_1, moment_2, grad, lr, iter (int64 [1] on CPU); outputs
// param, moment_1, moment_2 (in place). Args beta1 (0.9), beta2 (0.999), epsilon (1e-5).
//   t = iter + 1; m' = b1 m + (1-b1) g; v' = b2 v + (1-b2) g^2
//   param += lr * sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(v') + eps)      (lr negative: descent)
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/host_device.h"

namespace hetnet {

// Element i of the step (CPU loop and CUDA kernel); m and v are updated in place.
HN_HOST_DEVICE inline void AdamElement(int64_t i, float* w, const float* g, float* m, float* v, float b1, float b2,
                                       float eps, float correction, const float* lr) {
  const float gi = g[i];
  const float mi = m[i] = m[i] * b1 + gi * (1 - b1);
  const float vi = v[i] = v[i] * b2 + gi * gi * (1 - b2);
  w[i] += lr[0] * correction * mi / (sqrtf(vi) + eps);
}

template <class Context>
void AdamKernel(int64_t n, float* w, const float* g, float* m, float* v, float b1, float b2, float eps,
                float correction, const float* lr, Context* ctx);

template <class Context>
class AdamOp final : public Operator<Context> {
 public:
  AdamOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        beta1_(this->template GetSingleArgument<float>("beta1", 0.9f)),
        beta2_(this->template GetSingleArgument<float>("beta2", 0.999f)),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)) {}
  void RunOnDevice() override {
    const Tensor& g = this->Input(3);
    const Tensor& lr = this->Input(4);
    const Tensor& it = this->Input(5);
    for (int i : {0, 1, 2})
      HN_ENFORCE(this->Input(i).shape() == g.shape() && this->Input(i).dtype() == DataType::Float, "Adam: input ", i,
                 " ('", this->def().input(i), "') is ", this->Input(i).DebugString(), " but grad is ", g.DebugString());
    for (int i : {0, 1, 2})
      HN_ENFORCE(this->IsInputOutputAlias(i, i), "Adam: output ", i, " must be input ", i, " ('",
                 this->def().input(i), "'), updated in place");
    HN_ENFORCE(lr.numel() == 1 && it.numel() == 1 && it.dtype() == DataType::Int64,
               "Adam: lr must be one float and iter one int64");
    const double t = static_cast<double>(it.template data<int64_t>()[0] + 1);
    const float correction =
        static_cast<float>(std::sqrt(1.0 - std::pow(beta2_, t)) / (1.0 - std::pow(beta1_, t)));
    AdamKernel<Context>(g.numel(), this->Output(0)->template mutable_data_existing<float>(), g.template data<float>(),
                        this->Output(1)->template mutable_data_existing<float>(),
                        this->Output(2)->template mutable_data_existing<float>(), beta1_, beta2_, eps_, correction,
                        lr.template data<float>(), &this->context_);
  }

 private:
  float beta1_, beta2_, eps_;
};

}  // namespace hetnet
