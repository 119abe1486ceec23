#include "device/cuda/cuda_context.h"
#include "operators/activation_ops.h"

namespace hetnet {

namespace {
__global__ void SigmoidCUDA(int64_t n, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = 1.f / (1.f + expf(-x[i]));
}
__global__ void TanhCUDA(int64_t n, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = tanhf(x[i]);
}
__global__ void SigmoidGradientCUDA(int64_t n, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = dy[i] * y[i] * (1.f - y[i]);
}
__global__ void TanhGradientCUDA(int64_t n, const float* y, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = dy[i] * (1.f - y[i] * y[i]);
}
}  // namespace

template <>
void SigmoidKernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  SigmoidCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void TanhKernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  TanhCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void SigmoidGradientKernel<CUDAContext>(int64_t n, const float* y, const float* dy, float* dx, CUDAContext* ctx) {
  if (n == 0) return;
  SigmoidGradientCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void TanhGradientKernel<CUDAContext>(int64_t n, const float* y, const float* dy, float* dx, CUDAContext* ctx) {
  if (n == 0) return;
  TanhGradientCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Sigmoid, SigmoidOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SigmoidGradient, SigmoidGradientOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Tanh, TanhOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(TanhGradient, TanhGradientOp<CUDAContext>);

}  // namespace hetnet
