#include "operators/sum_scale_ops.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

OPERATOR_SCHEMA(Sum).NumInputs(1, 1 << 30).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = X0 + X1 + ... (same shapes); Y may be X0.");
OPERATOR_SCHEMA(Scale).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = scale * X (arg scale, default 1).");

REGISTER_OP_COST(Sum, [](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in,
                         const std::vector<TensorInfo>& out) {
  return MemoryCost(in, out, in.empty() ? 0 : static_cast<double>(in.size() - 1));
});

REGISTER_CPU_OPERATOR(Sum, SumOp<CPUContext>);
REGISTER_CPU_OPERATOR(Scale, ScaleOp<CPUContext>);

namespace {
caffe2::Argument ScaleArg(float v) {
  caffe2::Argument a;
  a.set_name("scale");
  a.set_f(v);
  return a;
}
}  // namespace

// Every input's gradient is dY; each gets its own blob (a Scale by 1), so no two inputs share one.
class GetSumGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::OperatorDef> ops;
    for (int i = 0; i < Def().input_size(); ++i) ops.push_back(GradientOp("Scale", {GO(0)}, {GI(i)}, {ScaleArg(1.f)}));
    return ops;
  }
};
REGISTER_GRADIENT(Sum, GetSumGradient);

class GetScaleGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    return {GradientOp("Scale", {GO(0)}, {GI(0)}, {ScaleArg(args.GetSingleArgument<float>("scale", 1.f))})};
  }
};
REGISTER_GRADIENT(Scale, GetScaleGradient);

}  // namespace hetnet
