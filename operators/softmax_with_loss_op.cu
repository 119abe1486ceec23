#include <cub/block/block_reduce.cuh>

#include "device/cuda/cuda_context.h"
#include "operators/softmax_with_loss_op.h"

// Labels are not range-checked on the GPU (the CPU kernel checks them); an out-of-range id is
// clamped so the kernel cannot read outside its row.

namespace hetnet {

namespace {
constexpr int kThreads = 256;
using Reduce = cub::BlockReduce<float, kThreads>;

__device__ int ClampLabel(int32_t l, int64_t D) { return l < 0 ? 0 : (l >= D ? static_cast<int>(D - 1) : l); }

// A single block: per-example losses and weights, reduced into loss[0].
__global__ void SoftmaxLossCUDA(int64_t N, int64_t D, const float* P, const int32_t* label,
                                const float* label_prob, const float* weights, float scale, float* loss) {
  __shared__ Reduce::TempStorage tmp;
  float sum = 0.f, total_w = 0.f;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const float w = weights ? weights[i] : 1.f;
    float l = 0.f;
    if (label) {
      l = -logf(fmaxf(P[i * D + ClampLabel(label[i], D)], 1e-20f));
    } else {
      for (int64_t j = 0; j < D; ++j) l -= logf(fmaxf(P[i * D + j], 1e-20f)) * label_prob[i * D + j];
    }
    sum += l * w;
    total_w += w;
  }
  sum = Reduce(tmp).Sum(sum);
  __syncthreads();
  total_w = Reduce(tmp).Sum(total_w);
  if (threadIdx.x == 0) loss[0] = total_w != 0.f ? sum * scale / total_w : 0.f;
}

// A single block: g = scale * d_loss / sum(w), written to g_out[0].
__global__ void LossGradScaleCUDA(int64_t N, const float* weights, float scale, const float* d_loss, float* g_out) {
  __shared__ Reduce::TempStorage tmp;
  float total_w = 0.f;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) total_w += weights ? weights[i] : 1.f;
  total_w = Reduce(tmp).Sum(total_w);
  if (threadIdx.x == 0) g_out[0] = total_w != 0.f ? scale * d_loss[0] / total_w : 0.f;
}

__global__ void SoftmaxLossGradientCUDA(int64_t N, int64_t D, const float* P, const int32_t* label,
                                        const float* label_prob, const float* weights, const float* g,
                                        float* dX) {
  HN_CUDA_KERNEL_LOOP(k, N * D) {
    const int64_t i = k / D, j = k % D;
    const float target = label ? (j == ClampLabel(label[i], D) ? 1.f : 0.f) : label_prob[k];
    dX[k] = (P[k] - target) * (weights ? weights[i] : 1.f) * g[0];
  }
}
}  // namespace

template <>
void SoftmaxLossKernel<CUDAContext>(int64_t N, int64_t D, const float* P, const int32_t* label,
                                    const float* label_prob, const float* weights, float scale, float* loss,
                                    CUDAContext* ctx) {
  SoftmaxLossCUDA<<<1, kThreads, 0, ctx->stream()>>>(N, D, P, label, label_prob, weights, scale, loss);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void SoftmaxLossGradientKernel<CUDAContext>(int64_t N, int64_t D, const float* P, const int32_t* label,
                                            const float* label_prob, const float* weights, float scale,
                                            const float* d_loss, float* dX, float* gp, CUDAContext* ctx) {
  if (N * D == 0) return;
  LossGradScaleCUDA<<<1, kThreads, 0, ctx->stream()>>>(N, weights, scale, d_loss, gp);
  HN_CUDA_CHECK(cudaGetLastError());
  SoftmaxLossGradientCUDA<<<CudaBlocks(N * D), kCudaThreads, 0, ctx->stream()>>>(N, D, P, label, label_prob,
                                                                                 weights, gp, dX);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(SoftmaxWithLoss, SoftmaxWithLossOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SoftmaxWithLossGradient, SoftmaxWithLossGradientOp<CUDAContext>);

}  // namespace hetnet
