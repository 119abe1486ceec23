#include "operators/momentum_sgd_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void MomentumSGDKernel<CPUContext>(int64_t n, const float* g, const float* m, float* ng, float* nm, const float* lr,
                                   float mu, bool nesterov, float* param, CPUContext*) {
  const float LR = lr[0];
  for (int64_t i = 0; i < n; ++i) MomentumSGDElement(i, g, m, ng, nm, LR, mu, nesterov, param);
}

OPERATOR_SCHEMA(MomentumSGDUpdate).NumInputs(4).NumOutputs(3).AllowInplace({{0, 0}, {1, 1}})
    .EnforceInplace({{3, 2}})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[1], in[3]};
    })
    .SetDoc("Momentum SGD step (args momentum, nesterov); inputs grad, momentum, lr, param.");
REGISTER_CPU_OPERATOR(MomentumSGDUpdate, MomentumSGDUpdateOp<CPUContext>);
NO_GRADIENT(MomentumSGDUpdate);

}  // namespace hetnet
