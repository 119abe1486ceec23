#include "operators/leaky_relu_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void LeakyReluKernel<CPUContext>(int64_t n, float alpha, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : alpha * x[i];
}

template <>
void LeakyReluGradientKernel<CPUContext>(int64_t n, float alpha, const float* y, const float* dy, float* dx,
                                         CPUContext*) {
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dy[i] : alpha * dy[i];
}

OPERATOR_SCHEMA(LeakyRelu).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = X if X > 0 else alpha * X (alpha default 0.01).");
OPERATOR_SCHEMA(LeakyReluGradient).NumInputs(2).NumOutputs(1).AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

REGISTER_CPU_OPERATOR(LeakyRelu, LeakyReluOp<CPUContext>);
REGISTER_CPU_OPERATOR(LeakyReluGradient, LeakyReluGradientOp<CPUContext>);

class GetLeakyReluGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("LeakyReluGradient", {O(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(LeakyRelu, GetLeakyReluGradient);

}  // namespace hetnet
