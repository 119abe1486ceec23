#include "device/cuda/cuda_context.h"
#include "operators/relu_op.h"

namespace hetnet {

namespace {
__global__ void ReluCUDA(int64_t n, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
__global__ void ReluGradientCUDA(int64_t n, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}
}  // namespace

template <>
void ReluKernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  ReluCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void ReluGradientKernel<CUDAContext>(int64_t n, const float* y, const float* dy, float* dx, CUDAContext* ctx) {
  if (n == 0) return;
  ReluGradientCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Relu, ReluOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ReluGradient, ReluGradientOp<CUDAContext>);

}  // namespace hetnet
