#include "operators/adagrad_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void AdagradKernel<CPUContext>(int64_t n, float* w, const float* g, float* h, float eps, float decay, const float* lr,
                               CPUContext*) {
  for (int64_t i = 0; i < n; ++i) AdagradElement(i, w, g, h, eps, decay, lr);
}

OPERATOR_SCHEMA(Adagrad).NumInputs(4).NumOutputs(2).AllowInplace({{0, 0}, {1, 1}})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[1]};
    })
    .SetDoc("Adagrad step; inputs param, moment, grad, lr; args epsilon, decay.");
REGISTER_CPU_OPERATOR(Adagrad, AdagradOp<CPUContext>);
NO_GRADIENT(Adagrad);

}  // namespace hetnet
