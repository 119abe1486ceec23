#include "operators/clip_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void ClipKernel<CPUContext>(int64_t n, float lo, float hi, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = ClipValue(x[i], lo, hi);
}

template <>
void ClipGradientKernel<CPUContext>(int64_t n, float lo, float hi, const float* y, const float* dy, float* dx,
                                    CPUContext*) {
  for (int64_t i = 0; i < n; ++i) dx[i] = ClipGradientValue(y[i], dy[i], lo, hi);
}

OPERATOR_SCHEMA(Clip).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = min(max(X, min), max), elementwise (float32).");
OPERATOR_SCHEMA(ClipGradient).NumInputs(2).NumOutputs(1).AllowInplace({{1, 0}}).IdenticalTypeAndShapeOfInput(1);

REGISTER_CPU_OPERATOR(Clip, ClipOp<CPUContext>);
REGISTER_CPU_OPERATOR(ClipGradient, ClipGradientOp<CPUContext>);

class GetClipGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("ClipGradient", {O(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(Clip, GetClipGradient);

}  // namespace hetnet
