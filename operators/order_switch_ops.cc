#include "operators/order_switch_ops.h"

#include "core/gradient.h"
#include "core/reduced_precision.h"

namespace hetnet {

// Defined in transpose_op.cc.
template <>
void TransposeKernel<CPUContext>(const StridedIndex& src, int64_t n, size_t item_size, const void* x, void* y,
                                 CPUContext* ctx);

namespace {
template <bool kToNCHW>
std::vector<TensorInfo> OrderSwitchShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  CheckOrderSwitchRank(def, in[0].dims);
  const auto axes = OrderSwitchAxes(static_cast<int>(in[0].dims.size()), kToNCHW);
  return {TensorInfo::Of(TransposeShape(in[0].dims, axes), in[0].dtype)};
}
}  // namespace

OPERATOR_SCHEMA(NHWC2NCHW).NumInputs(1).NumOutputs(1).TensorInference(OrderSwitchShape<true>)
    .SetDoc("[N, d1..dk, C] -> [N, C, d1..dk] (at least 3 dims).");
OPERATOR_SCHEMA(NCHW2NHWC).NumInputs(1).NumOutputs(1).TensorInference(OrderSwitchShape<false>)
    .SetDoc("[N, C, d1..dk] -> [N, d1..dk, C] (at least 3 dims).");

REGISTER_CPU_OPERATOR(NHWC2NCHW, OrderSwitchOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(NCHW2NHWC, OrderSwitchOp<CPUContext, false>);
REGISTER_REDUCED_PRECISION_KERNEL(NHWC2NCHW, CPU, "", NarrowOrderSwitchKernel());
REGISTER_REDUCED_PRECISION_KERNEL(NCHW2NHWC, CPU, "", NarrowOrderSwitchKernel());

template <bool kToNCHW>
class GetOrderSwitchGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp(kToNCHW ? "NCHW2NHWC" : "NHWC2NCHW", {GO(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(NHWC2NCHW, GetOrderSwitchGradient<true>);
REGISTER_GRADIENT(NCHW2NHWC, GetOrderSwitchGradient<false>);

}  // namespace hetnet
