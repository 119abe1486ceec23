// MaxPool / AveragePool on CUDA, default engine: one thread per output (forward) or input
// (gradient, a gather) running pool_op.h's per-element math. The CUDNN engine is pool_op_cudnn.cc.
#include "device/cuda/cuda_context.h"
#include "operators/pool_op.h"

namespace hetnet {

namespace {
template <bool kMax>
__global__ void PoolForwardCUDA(PoolParams p, int64_t n, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = PoolForwardAt<kMax>(p, i, x);
}
template <bool kMax>
__global__ void PoolBackwardCUDA(PoolParams p, int64_t n, const float* x, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = PoolBackwardAt<kMax>(p, i, x, y, dy);
}
template <bool kMax>
void Forward(const PoolParams& p, const float* x, float* y, CUDAContext* ctx) {
  const int64_t n = p.N * p.C * p.OH * p.OW;
  if (n == 0) return;
  PoolForwardCUDA<kMax><<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(p, n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <bool kMax>
void Backward(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx, CUDAContext* ctx) {
  const int64_t n = p.N * p.C * p.H * p.W;
  if (n == 0) return;
  PoolBackwardCUDA<kMax><<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(p, n, x, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}
}  // namespace

template <>
void PoolForward<CUDAContext, true>(const PoolParams& p, const float* x, float* y, CUDAContext* c) { Forward<true>(p, x, y, c); }
template <>
void PoolForward<CUDAContext, false>(const PoolParams& p, const float* x, float* y, CUDAContext* c) { Forward<false>(p, x, y, c); }
template <>
void PoolBackward<CUDAContext, true>(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx,
                                     CUDAContext* c) { Backward<true>(p, x, y, dy, dx, c); }
template <>
void PoolBackward<CUDAContext, false>(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx,
                                      CUDAContext* c) { Backward<false>(p, x, y, dy, dx, c); }

REGISTER_CUDA_OPERATOR(MaxPool, PoolOp<CUDAContext, true>);
REGISTER_CUDA_OPERATOR(AveragePool, PoolOp<CUDAContext, false>);
REGISTER_CUDA_OPERATOR(MaxPoolGradient, PoolGradientOp<CUDAContext, true>);
REGISTER_CUDA_OPERATOR(AveragePoolGradient, PoolGradientOp<CUDAContext, false>);

}  // namespace hetnet
