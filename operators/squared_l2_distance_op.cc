#include "operators/squared_l2_distance_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void SquaredL2Forward<CPUContext>(int64_t n, int64_t d, const float* x, const float* y, float* z, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) SquaredL2Row(i, d, x, y, z);
}
template <>
void SquaredL2Backward<CPUContext>(int64_t n, int64_t d, const float* x, const float* y, const float* dz, float* dx,
                                   float* dy, CPUContext*) {
  for (int64_t t = 0; t < n * d; ++t) SquaredL2GradElem(t, d, x, y, dz, dx, dy);
}

OPERATOR_SCHEMA(SquaredL2Distance)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      return std::vector<TensorInfo>{TensorInfo::Of({SquaredL2Rows(in[0].dims)}, DataType::Float)};
    })
    .SetDoc("SquaredL2Distance(X, Y) -> Z [N]: 0.5 * the squared L2 distance between the rows of X and Y (same "
            "shape, viewed as [dims[0], rest]). Gradient: SquaredL2DistanceGradient(X, Y, dZ) -> (dX, dY).");
OPERATOR_SCHEMA(SquaredL2DistanceGradient)
    .NumInputs(3)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[0]};
    });
REGISTER_CPU_OPERATOR(SquaredL2Distance, SquaredL2DistanceOp<CPUContext>);
REGISTER_CPU_OPERATOR(SquaredL2DistanceGradient, SquaredL2DistanceGradientOp<CPUContext>);

namespace {
class GetSquaredL2DistanceGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("SquaredL2DistanceGradient", {I(0), I(1), GO(0)}, {GI(0), GI(1)})};
  }
};
}  // namespace
REGISTER_GRADIENT(SquaredL2Distance, GetSquaredL2DistanceGradient);

}  // namespace hetnet
