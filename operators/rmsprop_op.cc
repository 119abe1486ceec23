#include "operators/rmsprop_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void RmsPropKernel<CPUContext>(int64_t n, const float* g, float* ng, float* ms, float* mom, float decay, float momentum,
                               float eps, const float* lr, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) RmsPropElement(i, g, ng, ms, mom, decay, momentum, eps, lr);
}

OPERATOR_SCHEMA(RmsProp).NumInputs(4).NumOutputs(3).AllowInplace({{0, 0}, {1, 1}, {2, 2}})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[1], in[2]};
    })
    .SetDoc("RMSProp step; inputs grad, mean_squares, mom, lr; args decay, momentum, epsilon.");
REGISTER_CPU_OPERATOR(RmsProp, RmsPropOp<CPUContext>);
NO_GRADIENT(RmsProp);

}  // namespace hetnet
