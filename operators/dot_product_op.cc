#include "operators/dot_product_op.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(DotProduct)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      return std::vector<TensorInfo>{TensorInfo::Of({DotProductRows(in[0].dims)}, DataType::Float)};
    })
    .SetDoc("DotProduct(X, Y) -> Z [N]: the dot products of the rows of X and Y (same shape, viewed as "
            "[dims[0], rest]). CPU only. Gradient: DotProductGradient(X, Y, dZ) -> (dX, dY).");
OPERATOR_SCHEMA(DotProductGradient)
    .NumInputs(3)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[0]};
    });
REGISTER_CPU_OPERATOR(DotProduct, DotProductOp);
REGISTER_CPU_OPERATOR(DotProductGradient, DotProductGradientOp);

namespace {
class GetDotProductGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("DotProductGradient", {I(0), I(1), GO(0)}, {GI(0), GI(1)})};
  }
};
}  // namespace
REGISTER_GRADIENT(DotProduct, GetDotProductGradient);

}  // namespace hetnet
