#include <cub/block/block_reduce.cuh>

#include "device/cuda/cuda_context.h"
#include "operators/prelu_op.h"

namespace hetnet {

namespace {
constexpr int kThreads = 256;
using BlockSum = cub::BlockReduce<float, kThreads>;

__global__ void PReluCUDA(int64_t n, int64_t C, int64_t inner, const float* x, const float* w, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) {
    const float s = w[(i / inner) % C];
    y[i] = x[i] > 0.f ? x[i] : s * x[i];
  }
}
__global__ void PReluGradXCUDA(int64_t n, int64_t C, int64_t inner, const float* x, const float* w, const float* dy,
                               float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = x[i] > 0.f ? dy[i] : w[(i / inner) % C] * dy[i];
}
// One block per channel c: the sum over its (n / (C * inner)) x inner elements.
__global__ void PReluGradWCUDA(int64_t n, int64_t C, int64_t inner, const float* x, const float* dy, float* dw) {
  __shared__ BlockSum::TempStorage tmp;
  const int64_t outer = n / (C * inner);
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    float s = 0.f;
    for (int64_t k = threadIdx.x; k < outer * inner; k += blockDim.x) {
      const int64_t i = ((k / inner) * C + c) * inner + k % inner;
      if (x[i] <= 0.f) s += dy[i] * x[i];
    }
    s = BlockSum(tmp).Sum(s);
    if (threadIdx.x == 0) dw[c] = s;
    __syncthreads();
  }
}
}  // namespace

template <>
void PReluKernel<CUDAContext>(int64_t n, int64_t C, int64_t inner, const float* x, const float* w, float* y,
                              CUDAContext* ctx) {
  if (n == 0) return;
  PReluCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, C, inner, x, w, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void PReluGradientKernel<CUDAContext>(int64_t n, int64_t C, int64_t inner, const float* x, const float* w,
                                      const float* dy, float* dx, float* dw, CUDAContext* ctx) {
  if (n > 0) {
    PReluGradXCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, C, inner, x, w, dy, dx);
    HN_CUDA_CHECK(cudaGetLastError());
  }
  if (n == 0) {
    HN_CUDA_CHECK(cudaMemsetAsync(dw, 0, C * sizeof(float), ctx->stream()));
    return;
  }
  PReluGradWCUDA<<<static_cast<int>(C < 4096 ? C : 4096), kThreads, 0, ctx->stream()>>>(n, C, inner, x, dy, dw);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(PRelu, PReluOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(PReluGradient, PReluGradientOp<CUDAContext>);

}  // namespace hetnet
