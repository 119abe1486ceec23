#include "operators/squeeze_ops.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(Squeeze)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(SqueezeShape(def, in[0].dims), in[0].dtype)};
    })
    .SetDoc("Removes the size-1 dims listed in `dims`.");
OPERATOR_SCHEMA(ExpandDims)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(ExpandDimsShape(def, in[0].dims), in[0].dtype)};
    })
    .SetDoc("Inserts size-1 dims at the positions `dims` of the output.");

REGISTER_CPU_OPERATOR(Squeeze, SqueezeOp<CPUContext>);
REGISTER_CPU_OPERATOR(ExpandDims, ExpandDimsOp<CPUContext>);

// Squeeze <-> ExpandDims with the same dims.
class GetSqueezeGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args;
    for (const auto& a : Def().arg())
      if (a.name() == "dims") args.push_back(a);
    return {GradientOp(Def().type() == "Squeeze" ? "ExpandDims" : "Squeeze", {GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(Squeeze, GetSqueezeGradient);
REGISTER_GRADIENT(ExpandDims, GetSqueezeGradient);

}  // namespace hetnet
