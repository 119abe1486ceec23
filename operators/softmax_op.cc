#include "operators/softmax_op.h"

#include <algorithm>
#include <cmath>

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

template <>
void SoftmaxKernel<CPUContext>(int64_t N, int64_t D, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < N; ++i) {
    const float* xr = x + i * D;
    float* yr = y + i * D;
    float m = -INFINITY;
    for (int64_t j = 0; j < D; ++j) m = std::max(m, xr[j]);
    float s = 0.f;
    for (int64_t j = 0; j < D; ++j) {
      yr[j] = std::exp(xr[j] - m);
      s += yr[j];
    }
    const float inv = 1.f / s;
    for (int64_t j = 0; j < D; ++j) yr[j] *= inv;
  }
}

template <>
void SoftmaxGradientKernel<CPUContext>(int64_t N, int64_t D, const float* y, const float* dy, float* dx,
                                       CPUContext*) {
  for (int64_t i = 0; i < N; ++i) {
    const float* yr = y + i * D;
    const float* dyr = dy + i * D;
    float dot = 0.f;
    for (int64_t j = 0; j < D; ++j) dot += yr[j] * dyr[j];
    for (int64_t j = 0; j < D; ++j) dx[i * D + j] = yr[j] * (dyr[j] - dot);
  }
}

OPERATOR_SCHEMA(Softmax).NumInputs(1).NumOutputs(1).AllowOneToOneInplace().IdenticalTypeAndShape()
    .SetDoc("Softmax over the dims from `axis` (default 1) on; X is viewed as 2-D [N, D].");
OPERATOR_SCHEMA(SoftmaxGradient).NumInputs(2).NumOutputs(1).AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(0);

// max, subtract, exp, sum, divide per element.
REGISTER_OP_COST(Softmax, ElementwiseCostFn(5));

REGISTER_CPU_OPERATOR(Softmax, SoftmaxOp<CPUContext>);
REGISTER_CPU_OPERATOR(SoftmaxGradient, SoftmaxGradientOp<CPUContext>);

class GetSoftmaxGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp("SoftmaxGradient", {O(0), GO(0)}, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
REGISTER_GRADIENT(Softmax, GetSoftmaxGradient);

}  // namespace hetnet
