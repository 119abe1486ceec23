// MomentumSGDUpdate (Caffe2): inputs grad, momentum, lr, param; outputs grad, momentum, param (in
// place). lr is positive here (the op subtracts):
//   plain:    m' = lr * g + mu * m;          g' = m';                      param -= g'
//   nesterov: m' = mu * m + lr * g;          g' = (1 + mu) * m' - mu * m;   param -= g'
#pragma once

#include "core/operator.h"
#include "operators/host_device.h"

namespace hetnet {

// Element i of the step, for the CPU loop and the CUDA kernel. ng/nm may alias g/m (in place):
// g[i] and m[i] are read before either is written.
HN_HOST_DEVICE inline void MomentumSGDElement(int64_t i, const float* g, const float* m, float* ng, float* nm,
                                              float LR, float mu, bool nesterov, float* param) {
  if (!nesterov) {
    const float adjusted = LR * g[i] + mu * m[i];
    nm[i] = adjusted;
    ng[i] = adjusted;
  } else {
    const float mi = m[i];
    const float mi_new = mu * mi + LR * g[i];
    nm[i] = mi_new;
    ng[i] = (1 + mu) * mi_new - mu * mi;
  }
  if (param) param[i] -= ng[i];
}

template <class Context>
void MomentumSGDKernel(int64_t n, const float* g, const float* m, float* ng, float* nm, const float* lr, float mu,
                       bool nesterov, float* param, Context* ctx);

template <class Context>
class MomentumSGDUpdateOp final : public Operator<Context> {
 public:
  MomentumSGDUpdateOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        momentum_(this->template GetSingleArgument<float>("momentum", 0.f)),
        nesterov_(this->template GetSingleArgument<int>("nesterov", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& g = this->Input(0);
    const Tensor& m = this->Input(1);
    const Tensor& lr = this->Input(2);
    const Tensor& p = this->Input(3);
    HN_ENFORCE(lr.numel() == 1 && lr.dtype() == DataType::Float, "MomentumSGDUpdate: lr ('", this->def().input(2),
               "') must be one float, is ", lr.DebugString());
    HN_ENFORCE(g.shape() == m.shape() && g.shape() == p.shape() && g.dtype() == DataType::Float &&
                   m.dtype() == DataType::Float && p.dtype() == DataType::Float,
               "MomentumSGDUpdate: grad ", g.DebugString(), ", momentum ", m.DebugString(), " and param ",
               p.DebugString(), " must be float tensors of one shape");
    HN_ENFORCE(this->IsInputOutputAlias(3, 2), "MomentumSGDUpdate: output 2 must be the param input ('",
               this->def().input(3), "')");
    const Tensor gv = g, mv = m;  // views: outputs may replace inputs' storage only when not in place
    Tensor* ng = this->Output(0, g.shape(), DataType::Float);
    Tensor* nm = this->Output(1, g.shape(), DataType::Float);
    Tensor* np = this->Output(2);
    MomentumSGDKernel<Context>(g.numel(), gv.template data<float>(), mv.template data<float>(),
                               ng->template mutable_data<float>(), nm->template mutable_data<float>(),
                               lr.template data<float>(), momentum_, nesterov_,
                               np->template mutable_data_existing<float>(), &this->context_);
  }

 private:
  float momentum_;
  bool nesterov_;
};

}  // namespace hetnet
