#include "operators/flatten_to_vec_op.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(FlattenToVec)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      int64_t n = 1;
      for (int64_t d : in[0].dims) n *= d;
      return std::vector<TensorInfo>{TensorInfo::Of({n}, in[0].dtype)};
    })
    .SetDoc("Flattens the input to a 1-D tensor of all its elements.");

REGISTER_CPU_OPERATOR(FlattenToVec, FlattenToVecOp<CPUContext>);

class GetFlattenToVecGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("ResizeLike", {GO(0), I(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(FlattenToVec, GetFlattenToVecGradient);

}  // namespace hetnet
