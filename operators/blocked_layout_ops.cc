#include "operators/blocked_layout_ops.h"

#include "core/gradient.h"

namespace hetnet {

namespace {
std::vector<TensorInfo> SameShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  if (in[0].known) CheckedChannelBlock(def, in[0].dims);
  return {in[0]};
}
}  // namespace

OPERATOR_SCHEMA(NCHWToBlocked).NumInputs(1).NumOutputs(1).TensorInference(SameShape)
    .SetDoc("NCHW X [N, C, H, W] -> the same shape in oneDNN's blocked layout nChw<b>c ([N, C/b, H, W, b] "
            "in memory); arg channel_block b: 8 or 16, dividing C.");
OPERATOR_SCHEMA(BlockedToNCHW).NumInputs(1).NumOutputs(1).TensorInference(SameShape)
    .SetDoc("The inverse of NCHWToBlocked (same argument).");

REGISTER_CPU_OPERATOR(NCHWToBlocked, BlockedLayoutOp<true>);
REGISTER_CPU_OPERATOR(BlockedToNCHW, BlockedLayoutOp<false>);

template <bool kToBlocked>
class GetBlockedLayoutGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp(kToBlocked ? "BlockedToNCHW" : "NCHWToBlocked", {GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(NCHWToBlocked, GetBlockedLayoutGradient<true>);
REGISTER_GRADIENT(BlockedToNCHW, GetBlockedLayoutGradient<false>);

}  // namespace hetnet
