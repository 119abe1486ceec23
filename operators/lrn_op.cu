// LRN on CUDA: one thread per element running lrn_op.h's per-element math.
#include "device/cuda/cuda_context.h"
#include "operators/lrn_op.h"

namespace hetnet {

namespace {
__global__ void LRNForwardCUDA(LRNParams p, int64_t n, const float* x, float* y, float* scale) {
  HN_CUDA_KERNEL_LOOP(i, n) {
    const float s = LRNScaleAt(p, i, x);
    scale[i] = s;
    y[i] = x[i] * powf(s, -p.beta);
  }
}
__global__ void LRNBackwardCUDA(LRNParams p, int64_t n, const float* x, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = LRNGradAt(p, i, x, y, dy);
}
}  // namespace

template <>
void LRNForward<CUDAContext>(const LRNParams& p, const float* x, float* y, float* scale, CUDAContext* ctx) {
  const int64_t n = p.N * p.C * p.HW;
  if (n == 0) return;
  LRNForwardCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(p, n, x, y, scale);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void LRNBackward<CUDAContext>(const LRNParams& p, const float* x, const float* y, const float* dy, float* dx,
                              CUDAContext* ctx) {
  const int64_t n = p.N * p.C * p.HW;
  if (n == 0) return;
  LRNBackwardCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(p, n, x, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(LRN, LRNOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(LRNGradient, LRNGradientOp<CUDAContext>);

}  // namespace hetnet
