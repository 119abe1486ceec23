#include "device/cuda/cuda_context.h"
#include "operators/leaky_relu_op.h"

namespace hetnet {

namespace {
__global__ void LeakyReluCUDA(int64_t n, float alpha, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = x[i] > 0.f ? x[i] : alpha * x[i];
}
__global__ void LeakyReluGradientCUDA(int64_t n, float alpha, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = y[i] > 0.f ? dy[i] : alpha * dy[i];
}
}  // namespace

template <>
void LeakyReluKernel<CUDAContext>(int64_t n, float alpha, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  LeakyReluCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, alpha, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void LeakyReluGradientKernel<CUDAContext>(int64_t n, float alpha, const float* y, const float* dy, float* dx,
                                          CUDAContext* ctx) {
  if (n == 0) return;
  LeakyReluGradientCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, alpha, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(LeakyRelu, LeakyReluOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(LeakyReluGradient, LeakyReluGradientOp<CUDAContext>);

}  // namespace hetnet
