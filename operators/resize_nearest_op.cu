// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// ResizeNearest on CUDA: one thread per output element (grid-stride) over ResizeSourceOffset, the
// index function the CPU path uses; the gradient adds with atomicAdd (upsampling reads a pixel many
// times).
#include "device/cuda/cuda_context.h"
#include "operators/resize_nearest_op.h"

namespace hetnet {

namespace {
__global__ void ResizeNearestKernel(ResizeGeom g, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(t, g.nc * g.oh * g.ow) { y[t] = x[ResizeSourceOffset(t, g)]; }
}
__global__ void ResizeNearestGradKernel(ResizeGeom g, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(t, g.nc * g.oh * g.ow) { atomicAdd(dx + ResizeSourceOffset(t, g), dy[t]); }
}
}  // namespace

template <>
void ResizeNearestForward<CUDAContext>(const ResizeGeom& g, const float* x, float* y, CUDAContext* ctx) {
  const int64_t total = g.nc * g.oh * g.ow;
  if (total == 0) return;
  ResizeNearestKernel<<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(g, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void ResizeNearestBackward<CUDAContext>(const ResizeGeom& g, const float* dy, float* dx, CUDAContext* ctx) {
  const int64_t n = g.nc * g.h * g.w, total = g.nc * g.oh * g.ow;
  if (n == 0) return;
  HN_CUDA_CHECK(cudaMemsetAsync(dx, 0, n * sizeof(float), ctx->stream()));
  if (total == 0) return;
  ResizeNearestGradKernel<<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(g, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(ResizeNearest, ResizeNearestOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ResizeNearestGradient, ResizeNearestGradientOp<CUDAContext>);

}  // namespace hetnet
