#include <cub/block/block_reduce.cuh>

#include "device/cuda/cuda_context.h"
#include "operators/cross_entropy_ops.h"

namespace hetnet {

namespace {
constexpr int kThreads = 256;
using BlockSum = cub::BlockReduce<float, kThreads>;

__device__ int64_t ClampLabel(int32_t l, int64_t D) { return l < 0 ? 0 : (l >= D ? D - 1 : l); }

__global__ void LabelXentCUDA(int64_t N, int64_t D, const float* x, const int32_t* label, float* y) {
  HN_CUDA_KERNEL_LOOP(i, N) y[i] = -XentLogTerm(1.f, x[i * D + ClampLabel(label[i], D)]);
}
__global__ void LabelXentGradCUDA(int64_t N, int64_t D, const float* x, const int32_t* label, const float* dy,
                                  float* dx) {
  HN_CUDA_KERNEL_LOOP(k, N * D) {
    const int64_t i = k / D;
    dx[k] = (k % D == ClampLabel(label[i], D)) ? XentGradValue(dy[i], 1.f, x[k]) : 0.f;
  }
}
// One block per row.
__global__ void XentCUDA(int64_t N, int64_t D, const float* x, const float* label, float* y) {
  __shared__ BlockSum::TempStorage tmp;
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) s -= XentLogTerm(label[i * D + j], x[i * D + j]);
    s = BlockSum(tmp).Sum(s);
    if (threadIdx.x == 0) y[i] = s;
    __syncthreads();
  }
}
__global__ void XentGradCUDA(int64_t N, int64_t D, const float* x, const float* label, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(k, N * D) dx[k] = XentGradValue(dy[k / D], label[k], x[k]);
}
// A single block.
__global__ void MeanCUDA(int64_t n, const float* x, float* y) {
  __shared__ BlockSum::TempStorage tmp;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  s = BlockSum(tmp).Sum(s);
  if (threadIdx.x == 0) y[0] = n > 0 ? s / static_cast<float>(n) : 0.f;
}
__global__ void MeanGradCUDA(int64_t n, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = dy[0] / static_cast<float>(n);
}
int RowBlocks(int64_t N) { return static_cast<int>(N < 4096 ? N : 4096); }
}  // namespace

template <>
void LabelCrossEntropyKernel<CUDAContext>(int64_t N, int64_t D, const float* x, const int32_t* label, float* y,
                                          CUDAContext* ctx) {
  if (N == 0) return;
  HN_ENFORCE(D > 0, "LabelCrossEntropy: rows have no classes (D = 0)");
  LabelXentCUDA<<<CudaBlocks(N), kCudaThreads, 0, ctx->stream()>>>(N, D, x, label, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void LabelCrossEntropyGradientKernel<CUDAContext>(int64_t N, int64_t D, const float* x, const int32_t* label,
                                                  const float* dy, float* dx, CUDAContext* ctx) {
  if (N * D == 0) return;
  LabelXentGradCUDA<<<CudaBlocks(N * D), kCudaThreads, 0, ctx->stream()>>>(N, D, x, label, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void CrossEntropyKernel<CUDAContext>(int64_t N, int64_t D, const float* x, const float* label, float* y,
                                     CUDAContext* ctx) {
  if (N == 0) return;
  XentCUDA<<<RowBlocks(N), kThreads, 0, ctx->stream()>>>(N, D, x, label, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void CrossEntropyGradientKernel<CUDAContext>(int64_t N, int64_t D, const float* x, const float* label,
                                             const float* dy, float* dx, CUDAContext* ctx) {
  if (N * D == 0) return;
  XentGradCUDA<<<CudaBlocks(N * D), kCudaThreads, 0, ctx->stream()>>>(N, D, x, label, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void AveragedLossKernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {
  MeanCUDA<<<1, kThreads, 0, ctx->stream()>>>(n, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void AveragedLossGradientKernel<CUDAContext>(int64_t n, const float* dy, float* dx, CUDAContext* ctx) {
  if (n == 0) return;
  MeanGradCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(LabelCrossEntropy, LabelCrossEntropyOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(LabelCrossEntropyGradient, LabelCrossEntropyGradientOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(CrossEntropy, CrossEntropyOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(CrossEntropyGradient, CrossEntropyGradientOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(AveragedLoss, AveragedLossOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(AveragedLossGradient, AveragedLossGradientOp<CUDAContext>);

}  // namespace hetnet
