#include "operators/channel_shuffle_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void ChannelShuffleKernel<CPUContext>(int64_t n, int64_t C, int64_t inner, int64_t group, const float* x, float* y,
                                      CPUContext*) {
  const int64_t K = C / group;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = (i / inner) % C;
    const int64_t src_c = (c % group) * K + c / group;
    y[i] = x[i + (src_c - c) * inner];
  }
}

OPERATOR_SCHEMA(ChannelShuffle).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape()
    .SetDoc("Shuffles channels across `group` groups (ShuffleNet); order NCHW (default) or NHWC.");
OPERATOR_SCHEMA(ChannelShuffleGradient).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape();

REGISTER_CPU_OPERATOR(ChannelShuffle, ChannelShuffleOp<CPUContext>);
REGISTER_CPU_OPERATOR(ChannelShuffleGradient, ChannelShuffleGradientOp<CPUContext>);

class GetChannelShuffleGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("ChannelShuffleGradient", {GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(ChannelShuffle, GetChannelShuffleGradient);

}  // namespace hetnet
