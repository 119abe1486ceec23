#include "operators/prelu_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void PReluKernel<CPUContext>(int64_t n, int64_t C, int64_t inner, const float* x, const float* w, float* y,
                             CPUContext*) {
  for (int64_t i = 0; i < n; ++i) {
    const float s = w[(i / inner) % C];
    y[i] = x[i] > 0.f ? x[i] : s * x[i];
  }
}

template <>
void PReluGradientKernel<CPUContext>(int64_t n, int64_t C, int64_t inner, const float* x, const float* w,
                                     const float* dy, float* dx, float* dw, CPUContext*) {
  std::vector<double> acc(static_cast<size_t>(C), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = (i / inner) % C;
    if (x[i] > 0.f) {
      dx[i] = dy[i];
    } else {
      dx[i] = w[c] * dy[i];
      acc[c] += static_cast<double>(dy[i]) * x[i];
    }
  }
  for (int64_t c = 0; c < C; ++c) dw[c] = static_cast<float>(acc[c]);
}

OPERATOR_SCHEMA(PRelu).NumInputs(2).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = X if X > 0 else slope[c] * X; Slope has one element per channel (order NCHW/NHWC) or one shared.");
OPERATOR_SCHEMA(PReluGradient)
    .NumInputs(4)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[2], in[3]};
    });

REGISTER_CPU_OPERATOR(PRelu, PReluOp<CPUContext>);
REGISTER_CPU_OPERATOR(PReluGradient, PReluGradientOp<CPUContext>);

class GetPReluGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("PReluGradient", {O(0), GO(0), I(0), I(1)}, {GI(0), GI(1)}, args)};
  }
};
REGISTER_GRADIENT(PRelu, GetPReluGradient);

}  // namespace hetnet
