// ChannelBackpropStats on CPU: schema and float64-accumulating loops in memory order.
#include "operators/channel_backprop_stats_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void ChannelBackpropSums<CPUContext>(const ChannelLayout& d, const float* x, const float* mean, const float* rstd,
                                     const float* dy, float* dscale, float* dbias, CPUContext*) {
  std::vector<double> g(d.C, 0.0), b(d.C, 0.0);
  ForEachChannelElement(d, [&](int64_t i, int64_t c) {
    g[c] += double(dy[i]) * (double(x[i]) - mean[c]) * rstd[c];
    b[c] += dy[i];
  });
  for (int64_t c = 0; c < d.C; ++c) {
    dscale[c] = static_cast<float>(g[c]);
    dbias[c] = static_cast<float>(b[c]);
  }
}

OPERATOR_SCHEMA(ChannelBackpropStats)
    .NumInputs(4)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[1], in[1]};
    })
    .SetDoc("ChannelBackpropStats(X, mean, rstd, dY) -> dscale, dbias: per channel, dscale = sum dY * "
            "(X - mean) * rstd and dbias = sum dY over all other dims (float64 accumulation). Arg order "
            "\"NCHW\" (default) or \"NHWC\"; X has 2 or more dims. The per-device halves of the 7-input "
            "SpatialBNGradient (inputs 5, 6 are their sums over all devices/processes).");

REGISTER_CPU_OPERATOR(ChannelBackpropStats, ChannelBackpropStatsOp<CPUContext>);
NO_GRADIENT(ChannelBackpropStats);

}  // namespace hetnet
