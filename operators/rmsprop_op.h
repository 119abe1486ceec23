// RmsProp (Caffe2): inputs grad, mean_squares, mom, lr; outputs grad, mean_squares, mom. Args decay
// (0.9), momentum (0), epsilon (1e-5):
//   ms' = ms + (1 - decay) (g^2 - ms);  mom' = momentum mom + lr g / sqrt(eps + ms');  grad' = mom'
// The optimizer then adds grad' to the param (lr negative: descent).
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/host_device.h"

namespace hetnet {

// Element i of the step (CPU loop and CUDA kernel); ng may alias g (g[i] is read first).
HN_HOST_DEVICE inline void RmsPropElement(int64_t i, const float* g, float* ng, float* ms, float* mom, float decay,
                                          float momentum, float eps, const float* lr) {
  const float gi = g[i];
  const float msi = ms[i] = ms[i] + (1.f - decay) * (gi * gi - ms[i]);
  const float mi = mom[i] = mom[i] * momentum + lr[0] * gi / sqrtf(eps + msi);
  ng[i] = mi;
}

template <class Context>
void RmsPropKernel(int64_t n, const float* g, float* ng, float* ms, float* mom, float decay, float momentum,
                   float eps, const float* lr, Context* ctx);

template <class Context>
class RmsPropOp final : public Operator<Context> {
 public:
  RmsPropOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        decay_(this->template GetSingleArgument<float>("decay", 0.9f)),
        momentum_(this->template GetSingleArgument<float>("momentum", 0.f)),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)) {}
  void RunOnDevice() override {
    const Tensor& g = this->Input(0);
    const Tensor& lr = this->Input(3);
    for (int i : {1, 2}) {
      HN_ENFORCE(this->Input(i).shape() == g.shape() && this->Input(i).dtype() == DataType::Float, "RmsProp: input ",
                 i, " ('", this->def().input(i), "') is ", this->Input(i).DebugString(), " but grad is ",
                 g.DebugString());
      HN_ENFORCE(this->IsInputOutputAlias(i, i), "RmsProp: output ", i, " must be input ", i, " ('",
                 this->def().input(i), "'), updated in place");
    }
    HN_ENFORCE(lr.numel() == 1, "RmsProp: lr must be one float");
    const Tensor gv = g;
    Tensor* ng = this->Output(0, g.shape(), DataType::Float);
    RmsPropKernel<Context>(g.numel(), gv.template data<float>(), ng->template mutable_data<float>(),
                           this->Output(1)->template mutable_data_existing<float>(),
                           this->Output(2)->template mutable_data_existing<float>(), decay_, momentum_, eps_,
                           lr.template data<float>(), &this->context_);
  }

 private:
  float decay_, momentum_, eps_;
};

}  // namespace hetnet
