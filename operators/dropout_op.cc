// Dropout on CPU: schemas, gradient maker (Caffe2's: DropoutGrad(dY, mask), or DropoutGrad(dY) with
// is_test=1) and CPU kernels.
#include "operators/dropout_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void DropoutKernel<CPUContext>(int64_t n, float ratio, const float* x, const float* u, float* y, bool* mask,
                               CPUContext*) {
  const float scale = 1.f / (1.f - ratio);
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = u[i] >= ratio;
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : 0.f;
  }
}

template <>
void DropoutGradKernel<CPUContext>(int64_t n, float scale, const float* dy, const bool* mask, float* dx, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) dx[i] = (!mask || mask[i]) ? dy[i] * scale : 0.f;
}

OPERATOR_SCHEMA(Dropout)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{in[0]};
      if (def.output_size() > 1) out.push_back(TensorInfo::Of(in[0].dims, DataType::Bool));
      return out;
    })
    .SetDoc("Dropout(X) -> Y, mask (bool). Args ratio (0.5), is_test (0: training).");
OPERATOR_SCHEMA(DropoutGrad).NumInputs(1, 2).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(Dropout, DropoutOp<CPUContext>);
REGISTER_CPU_OPERATOR(DropoutGrad, DropoutGradOp<CPUContext>);

class GetDropoutGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const bool is_test = ArgumentHelper(Def()).GetSingleArgument<int>("is_test", 0) != 0;
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    if (is_test) return {GradientOp("DropoutGrad", {GO(0)}, {GI(0)}, args)};
    return {GradientOp("DropoutGrad", {GO(0), O(1)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(Dropout, GetDropoutGradient);

}  // namespace hetnet
