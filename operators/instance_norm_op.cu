// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// InstanceNorm on CUDA: one thread per (n, c) slice (forward, dX) or per channel (dscale, dbias),
// grid-stride loops over the slice/channel functions the CPU path runs (instance_norm_op.h).
// Simple, not fast for large images.
#include "device/cuda/cuda_context.h"
#include "operators/instance_norm_op.h"

namespace hetnet {

namespace {
__global__ void InstanceNormFwdKernel(InstanceNormGeom g, float eps, const float* x, const float* scale,
                                      const float* bias, float* y, float* mean, float* inv) {
  HN_CUDA_KERNEL_LOOP(i, g.n * g.c) { InstanceNormSlice(i, g, eps, x, scale, bias, y, mean, inv); }
}
__global__ void InstanceNormGradSliceKernel(InstanceNormGeom g, const float* x, const float* dy, const float* scale,
                                            const float* mean, const float* inv, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, g.n * g.c) { InstanceNormGradSlice(i, g, x, dy, scale, mean, inv, dx); }
}
__global__ void InstanceNormGradChannelKernel(InstanceNormGeom g, const float* x, const float* dy, const float* mean,
                                              const float* inv, float* dscale, float* dbias) {
  HN_CUDA_KERNEL_LOOP(c, g.c) { InstanceNormAffineGradChannel(c, g, x, dy, mean, inv, dscale, dbias); }
}
}  // namespace

template <>
void InstanceNormForward<CUDAContext>(InstanceNormGeom g, float eps, const float* x, const float* scale,
                                      const float* bias, float* y, float* mean, float* inv, CUDAContext* ctx) {
  const int64_t m = g.n * g.c;
  if (m == 0) return;
  InstanceNormFwdKernel<<<CudaBlocks(m), kCudaThreads, 0, ctx->stream()>>>(g, eps, x, scale, bias, y, mean, inv);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void InstanceNormBackward<CUDAContext>(InstanceNormGeom g, const float* x, const float* dy, const float* scale,
                                       const float* mean, const float* inv, float* dx, float* dscale, float* dbias,
                                       CUDAContext* ctx) {
  // Channel sums first (same stream, so ordered): dX may be dY's buffer.
  if (g.c > 0) {
    InstanceNormGradChannelKernel<<<CudaBlocks(g.c), kCudaThreads, 0, ctx->stream()>>>(g, x, dy, mean, inv, dscale,
                                                                                        dbias);
    HN_CUDA_CHECK(cudaGetLastError());
  }
  if (g.n * g.c > 0) {
    InstanceNormGradSliceKernel<<<CudaBlocks(g.n * g.c), kCudaThreads, 0, ctx->stream()>>>(g, x, dy, scale, mean,
                                                                                            inv, dx);
    HN_CUDA_CHECK(cudaGetLastError());
  }
}

REGISTER_CUDA_OPERATOR(InstanceNorm, InstanceNormOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(InstanceNormGradient, InstanceNormGradientOp<CUDAContext>);

}  // namespace hetnet
