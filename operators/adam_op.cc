#include "operators/adam_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void AdamKernel<CPUContext>(int64_t n, float* w, const float* g, float* m, float* v, float b1, float b2, float eps,
                            float correction, const float* lr, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) AdamElement(i, w, g, m, v, b1, b2, eps, correction, lr);
}

OPERATOR_SCHEMA(Adam).NumInputs(6).NumOutputs(3).AllowInplace({{0, 0}, {1, 1}, {2, 2}}).InputsOnCPU({5})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[1], in[2]};
    })
    .SetDoc("Adam step; inputs param, moment_1, moment_2, grad, lr, iter; args beta1, beta2, epsilon.");
REGISTER_CPU_OPERATOR(Adam, AdamOp<CPUContext>);
NO_GRADIENT(Adam);

}  // namespace hetnet
