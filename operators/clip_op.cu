#include "device/cuda/cuda_context.h"
#include "operators/clip_op.h"

namespace hetnet {

namespace {
__global__ void ClipCUDA(int64_t n, float lo, float hi, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = ClipValue(x[i], lo, hi);
}
__global__ void ClipGradientCUDA(int64_t n, float lo, float hi, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = ClipGradientValue(y[i], dy[i], lo, hi);
}
}  // namespace

template <>
void ClipKernel<CUDAContext>(int64_t n, float lo, float hi, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  ClipCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, lo, hi, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void ClipGradientKernel<CUDAContext>(int64_t n, float lo, float hi, const float* y, const float* dy, float* dx,
                                     CUDAContext* ctx) {
  if (n == 0) return;
  ClipGradientCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, lo, hi, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Clip, ClipOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ClipGradient, ClipGradientOp<CUDAContext>);

}  // namespace hetnet
