#include "device/cuda/cuda_context.h"
#include "operators/clip_by_norm_op.h"

namespace hetnet {

namespace {
__global__ void SumSqrCUDA(int64_t n, const float* x, float* y, float scale) {
  __shared__ float partial[kCudaThreads];
  float s = 0.f;
  HN_CUDA_KERNEL_LOOP(i, n) s += x[i] * x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) partial[threadIdx.x] += partial[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(y, partial[0] * scale);
}
__global__ void SqrtCUDA(int64_t n, const float* x, float* y) { HN_CUDA_KERNEL_LOOP(i, n) y[i] = sqrtf(x[i]); }
__global__ void SignCUDA(int64_t n, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = SignValue(x[i]);
}
}  // namespace

template <>
void SumSqrKernel<CUDAContext>(int64_t n, const float* x, float* y, float scale, CUDAContext* ctx) {
  HN_CUDA_CHECK(cudaMemsetAsync(y, 0, sizeof(float), ctx->stream()));
  if (n == 0) return;
  SumSqrCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y, scale);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void SqrtKernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  SqrtCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void SignKernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  SignCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(SumSqrElements, SumSqrElementsOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Sqrt, SqrtOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Sign, SignOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ClipTensorByScaling, ClipTensorByScalingOp<CUDAContext>);

}  // namespace hetnet
