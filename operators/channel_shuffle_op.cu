#include "device/cuda/cuda_context.h"
#include "operators/channel_shuffle_op.h"

namespace hetnet {

namespace {
__global__ void ChannelShuffleCUDA(int64_t n, int64_t C, int64_t inner, int64_t group, const float* x, float* y) {
  const int64_t K = C / group;
  HN_CUDA_KERNEL_LOOP(i, n) {
    const int64_t c = (i / inner) % C;
    const int64_t src_c = (c % group) * K + c / group;
    y[i] = x[i + (src_c - c) * inner];
  }
}
}  // namespace

template <>
void ChannelShuffleKernel<CUDAContext>(int64_t n, int64_t C, int64_t inner, int64_t group, const float* x, float* y,
                                       CUDAContext* ctx) {
  if (n == 0) return;
  ChannelShuffleCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, C, inner, group, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(ChannelShuffle, ChannelShuffleOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ChannelShuffleGradient, ChannelShuffleGradientOp<CUDAContext>);

}  // namespace hetnet
