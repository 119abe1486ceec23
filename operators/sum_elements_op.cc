#include "operators/sum_elements_op.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(SumElements)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>&) {
      return std::vector<TensorInfo>{TensorInfo::Of({}, DataType::Float)};
    })
    .SetDoc("Scalar sum of all elements (float32); `average` divides by the element count.");
OPERATOR_SCHEMA(SumElementsGradient).NumInputs(2).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(SumElements, SumElementsOp<CPUContext>);
REGISTER_CPU_OPERATOR(SumElementsGradient, SumElementsGradientOp<CPUContext>);

class GetSumElementsGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("SumElementsGradient", {I(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(SumElements, GetSumElementsGradient);

}  // namespace hetnet
