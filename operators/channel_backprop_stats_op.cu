// ChannelBackpropStats on CUDA: one block per channel, float64 accumulation (BlockChannelSums).
#include "device/cuda/cuda_context.h"
#include "operators/channel_backprop_stats_op.h"

namespace hetnet {

namespace {
constexpr int kChannelThreads = 256;

__global__ void ChannelBackpropSumsKernel(ChannelLayout d, const float* x, const float* mean, const float* rstd,
                                          const float* dy, float* dscale, float* dbias) {
  const int64_t c = blockIdx.x;
  const double m = mean[c], r = rstd[c];
  double g, b;
  BlockChannelSums(d, [&](int64_t i, double& sg, double& sb) {
    sg += double(dy[i]) * (double(x[i]) - m) * r;
    sb += dy[i];
  }, g, b);
  if (threadIdx.x == 0) {
    dscale[c] = static_cast<float>(g);
    dbias[c] = static_cast<float>(b);
  }
}
}  // namespace

template <>
void ChannelBackpropSums<CUDAContext>(const ChannelLayout& d, const float* x, const float* mean, const float* rstd,
                                      const float* dy, float* dscale, float* dbias, CUDAContext* ctx) {
  if (d.C == 0) return;
  ChannelBackpropSumsKernel<<<static_cast<unsigned>(d.C), kChannelThreads, 0, ctx->stream()>>>(d, x, mean, rstd, dy,
                                                                                               dscale, dbias);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(ChannelBackpropStats, ChannelBackpropStatsOp<CUDAContext>);

}  // namespace hetnet
