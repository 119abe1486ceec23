#include "operators/relu_op.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

template <>
void ReluKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

template <>
void ReluGradientKernel<CPUContext>(int64_t n, const float* y, const float* dy, float* dx, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

OPERATOR_SCHEMA(Relu).NumInputs(1).NumOutputs(1).AllowOneToOneInplace().IdenticalTypeAndShape()
    .SetDoc("Y = max(X, 0), elementwise.");
OPERATOR_SCHEMA(ReluGradient).NumInputs(2).NumOutputs(1).AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

REGISTER_OP_COST(Relu, ElementwiseCostFn(1));

REGISTER_CPU_OPERATOR(Relu, ReluOp<CPUContext>);
REGISTER_CPU_OPERATOR(ReluGradient, ReluGradientOp<CPUContext>);

class GetReluGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("ReluGradient", {O(0), GO(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(Relu, GetReluGradient);

}  // namespace hetnet
