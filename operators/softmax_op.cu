#include <cub/block/block_reduce.cuh>

#include "device/cuda/cuda_context.h"
#include "operators/softmax_op.h"

namespace hetnet {

namespace {
constexpr int kRowThreads = 128;
using RowReduce = cub::BlockReduce<float, kRowThreads>;
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// One block per row (grid-strided over rows).
__global__ void SoftmaxCUDA(int64_t N, int64_t D, const float* x, float* y) {
  __shared__ RowReduce::TempStorage tmp;
  __shared__ float shared_val;
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const float* xr = x + i * D;
    float* yr = y + i * D;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = RowReduce(tmp).Reduce(m, MaxOp());
    if (threadIdx.x == 0) shared_val = m;
    __syncthreads();
    m = shared_val;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const float e = expf(xr[j] - m);
      yr[j] = e;
      s += e;
    }
    __syncthreads();
    s = RowReduce(tmp).Sum(s);
    if (threadIdx.x == 0) shared_val = s;
    __syncthreads();
    const float inv = 1.f / shared_val;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) yr[j] *= inv;
    __syncthreads();
  }
}

__global__ void SoftmaxGradientCUDA(int64_t N, int64_t D, const float* y, const float* dy, float* dx) {
  __shared__ RowReduce::TempStorage tmp;
  __shared__ float shared_val;
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const float* yr = y + i * D;
    const float* dyr = dy + i * D;
    float dot = 0.f;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) dot += yr[j] * dyr[j];
    dot = RowReduce(tmp).Sum(dot);
    if (threadIdx.x == 0) shared_val = dot;
    __syncthreads();
    dot = shared_val;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) dx[i * D + j] = yr[j] * (dyr[j] - dot);
    __syncthreads();
  }
}

int RowBlocks(int64_t N) { return static_cast<int>(N < 4096 ? N : 4096); }
}  // namespace

template <>
void SoftmaxKernel<CUDAContext>(int64_t N, int64_t D, const float* x, float* y, CUDAContext* ctx) {
  if (N == 0 || D == 0) return;
  SoftmaxCUDA<<<RowBlocks(N), kRowThreads, 0, ctx->stream()>>>(N, D, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void SoftmaxGradientKernel<CUDAContext>(int64_t N, int64_t D, const float* y, const float* dy, float* dx,
                                        CUDAContext* ctx) {
  if (N == 0 || D == 0) return;
  SoftmaxGradientCUDA<<<RowBlocks(N), kRowThreads, 0, ctx->stream()>>>(N, D, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Softmax, SoftmaxOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SoftmaxGradient, SoftmaxGradientOp<CUDAContext>);

}  // namespace hetnet
