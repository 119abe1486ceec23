// ChannelStats on CUDA: one block per channel, float64 accumulation (BlockChannelSums).
#include "device/cuda/cuda_context.h"
#include "operators/channel_stats_op.h"

namespace hetnet {

namespace {
constexpr int kChannelThreads = 256;

template <typename T>
__global__ void ChannelSumsKernel(ChannelLayout d, const float* x, T* sum, T* sumsq) {
  double s, q;
  BlockChannelSums(d, [&](int64_t i, double& a, double& b) {
    const double v = x[i];
    a += v;
    b += v * v;
  }, s, q);
  if (threadIdx.x == 0) {
    sum[blockIdx.x] = static_cast<T>(s);
    sumsq[blockIdx.x] = static_cast<T>(q);
  }
}

template <typename T>
void LaunchChannelSums(const ChannelLayout& d, const float* x, T* sum, T* sumsq, CUDAContext* ctx) {
  if (d.C == 0) return;
  ChannelSumsKernel<T><<<static_cast<unsigned>(d.C), kChannelThreads, 0, ctx->stream()>>>(d, x, sum, sumsq);
  HN_CUDA_CHECK(cudaGetLastError());
}
}  // namespace

template <>
void ChannelSums<CUDAContext, float>(const ChannelLayout& d, const float* x, float* sum, float* sumsq,
                                     CUDAContext* ctx) {
  LaunchChannelSums(d, x, sum, sumsq, ctx);
}
template <>
void ChannelSums<CUDAContext, double>(const ChannelLayout& d, const float* x, double* sum, double* sumsq,
                                      CUDAContext* ctx) {
  LaunchChannelSums(d, x, sum, sumsq, ctx);
}

REGISTER_CUDA_OPERATOR(ChannelStats, ChannelStatsOp<CUDAContext>);

}  // namespace hetnet
