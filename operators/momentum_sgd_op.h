// MomentumSGDUpdate (Caffe2): inputs grad, momentum, lr, param; outputs grad, momentum, param (in
// place). lr is positive here (the op subtracts):
//   plain:    m' = lr * g + mu * m;          g' = m';                      param -= g'
//   nesterov: m' = mu * m + lr * g;          g' = (1 + mu) * m' - mu * m;   param -= g'
#pragma once

#include "core/operator.h"

namespace hetnet {

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
