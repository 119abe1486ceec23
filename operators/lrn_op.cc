// LRN on CPU: schemas, gradient maker (LRNGradient(X, Y, dY) -> dX) and CPU loops over lrn_op.h's
// per-element math.
#include "operators/lrn_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void LRNForward<CPUContext>(const LRNParams& p, const float* x, float* y, float* scale, CPUContext*) {
  const int64_t n = p.N * p.C * p.HW;
  for (int64_t i = 0; i < n; ++i) {
    scale[i] = LRNScaleAt(p, i, x);
    y[i] = x[i] * std::pow(scale[i], -p.beta);
  }
}

template <>
void LRNBackward<CPUContext>(const LRNParams& p, const float* x, const float* y, const float* dy, float* dx,
                             CPUContext*) {
  const int64_t n = p.N * p.C * p.HW;
  for (int64_t i = 0; i < n; ++i) dx[i] = LRNGradAt(p, i, x, y, dy);
}

OPERATOR_SCHEMA(LRN)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>(def.output_size(), in[0]);
    })
    .SetDoc("Local response normalization across channels (NCHW): outputs Y and scale. Args size, alpha, beta, "
            "bias (1).");
OPERATOR_SCHEMA(LRNGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(LRN, LRNOp<CPUContext>);
REGISTER_CPU_OPERATOR(LRNGradient, LRNGradientOp<CPUContext>);

class GetLRNGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("LRNGradient", {I(0), O(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(LRN, GetLRNGradient);

}  // namespace hetnet
