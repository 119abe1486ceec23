// ChannelStats on CPU: schema and float64-accumulating loops (in memory order for both layouts).
#include "operators/channel_stats_op.h"

#include "core/gradient.h"

namespace hetnet {

template <typename T>
static void ChannelSumsCPU(const ChannelLayout& d, const float* x, T* sum, T* sumsq) {
  std::vector<double> s(d.C, 0.0), q(d.C, 0.0);
  ForEachChannelElement(d, [&](int64_t i, int64_t c) {
    const double v = x[i];
    s[c] += v;
    q[c] += v * v;
  });
  for (int64_t c = 0; c < d.C; ++c) {
    sum[c] = static_cast<T>(s[c]);
    sumsq[c] = static_cast<T>(q[c]);
  }
}

template <>
void ChannelSums<CPUContext, float>(const ChannelLayout& d, const float* x, float* sum, float* sumsq, CPUContext*) {
  ChannelSumsCPU(d, x, sum, sumsq);
}
template <>
void ChannelSums<CPUContext, double>(const ChannelLayout& d, const float* x, double* sum, double* sumsq, CPUContext*) {
  ChannelSumsCPU(d, x, sum, sumsq);
}

OPERATOR_SCHEMA(ChannelStats)
    .NumInputs(1)
    .NumOutputs(2, 3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const ChannelLayout d = ChannelLayoutOf(def, in[0].dims);
      const DataType t = ChannelStatsDtype(def);
      std::vector<TensorInfo> out{TensorInfo::Of({d.C}, t), TensorInfo::Of({d.C}, t)};
      if (def.output_size() > 2) out.push_back(TensorInfo::Of({1}, t));
      return out;
    })
    .SetDoc("ChannelStats(X) -> sum, sumsq: per channel, the sum of X and of X^2 over all other dims "
            "(float64 accumulation); hetnet extension: an optional third output, the element count per channel "
            "as a [1] tensor (sync BN's count, from X's shape). Args: order \"NCHW\" (default, channel = dim 1) or \"NHWC\" (channel = "
            "last dim); X has 2 or more dims. hetnet extension: dtype \"float\" (default, as Caffe2) or "
            "\"double\" for the outputs, which keeps SpatialBN's var = sumsq/M - mean^2 accurate when "
            "|mean| >> std (the 7-input SpatialBN accepts either dtype).");

REGISTER_CPU_OPERATOR(ChannelStats, ChannelStatsOp<CPUContext>);
NO_GRADIENT(ChannelStats);

}  // namespace hetnet
