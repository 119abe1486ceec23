// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// LayerNorm on CUDA: one thread per row (forward, dX) or per column (dgamma, dbeta), grid-stride
// loops over the same row/column functions the CPU path runs (layer_norm_op.h). Simple, not fast
// for long rows.
#include "device/cuda/cuda_context.h"
#include "operators/layer_norm_op.h"

namespace hetnet {

namespace {
__global__ void LayerNormFwdKernel(LayerNormGeom g, float eps, const float* x, const float* gamma, const float* beta,
                                   float* y, float* mean, float* stdev) {
  HN_CUDA_KERNEL_LOOP(i, g.m) { LayerNormRow(i, g, eps, x, gamma, beta, y, mean, stdev); }
}
__global__ void LayerNormGradRowsKernel(LayerNormGeom g, const float* dy, const float* x, const float* mean,
                                        const float* stdev, const float* gamma, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, g.m) { LayerNormGradRow(i, g, dy, x, mean, stdev, gamma, dx); }
}
__global__ void LayerNormGradColsKernel(LayerNormGeom g, const float* dy, const float* x, const float* mean,
                                        const float* stdev, float* dgamma, float* dbeta) {
  HN_CUDA_KERNEL_LOOP(j, g.n) { LayerNormAffineGradCol(j, g, dy, x, mean, stdev, dgamma, dbeta); }
}
}  // namespace

template <>
void LayerNormForward<CUDAContext>(LayerNormGeom g, float eps, const float* x, const float* gamma, const float* beta,
                                   float* y, float* mean, float* stdev, CUDAContext* ctx) {
  if (g.m == 0) return;
  LayerNormFwdKernel<<<CudaBlocks(g.m), kCudaThreads, 0, ctx->stream()>>>(g, eps, x, gamma, beta, y, mean, stdev);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void LayerNormBackward<CUDAContext>(LayerNormGeom g, const float* dy, const float* x, const float* mean,
                                    const float* stdev, const float* gamma, float* dx, float* dgamma, float* dbeta,
                                    CUDAContext* ctx) {
  if (g.m > 0) {
    LayerNormGradRowsKernel<<<CudaBlocks(g.m), kCudaThreads, 0, ctx->stream()>>>(g, dy, x, mean, stdev, gamma, dx);
    HN_CUDA_CHECK(cudaGetLastError());
  }
  if (dgamma && g.n > 0) {
    LayerNormGradColsKernel<<<CudaBlocks(g.n), kCudaThreads, 0, ctx->stream()>>>(g, dy, x, mean, stdev, dgamma,
                                                                                  dbeta);
    HN_CUDA_CHECK(cudaGetLastError());
  }
}

REGISTER_CUDA_OPERATOR(LayerNorm, LayerNormOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(LayerNormGradient, LayerNormGradientOp<CUDAContext>);

}  // namespace hetnet
