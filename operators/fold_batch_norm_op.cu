// FoldBatchNormWeights on the GPU (operators/fold_batch_norm_op.h): the weights of a net imported for
// CUDA stay there and are folded there, once per change, instead of crossing PCIe every run.
#include <algorithm>

#include "device/cuda/cuda_context.h"
#include "operators/fold_batch_norm_op.h"

namespace hetnet {

namespace {
struct Stats {
  const float *scale, *shift, *mean, *var, *bias;
};

__device__ double Alpha(const Stats& s, int64_t c, double epsilon) {
  return s.scale[c] / sqrt(static_cast<double>(s.var[c]) + epsilon);
}

__global__ void FoldWeightsCUDA(int64_t n, int64_t row, const float* src, Stats s, double epsilon, float* wd) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    wd[i] = static_cast<float>(src[i] * Alpha(s, i / row, epsilon));
}

__global__ void FoldBiasCUDA(int64_t channels, Stats s, double epsilon, float* bd) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x)
    bd[c] = static_cast<float>(((s.bias ? s.bias[c] : 0.0) - s.mean[c]) * Alpha(s, c, epsilon) + s.shift[c]);
}

int Blocks(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 4096)); }
}  // namespace

template <>
void FoldBatchNormKernel<CUDAContext>(int64_t channels, int64_t row, const float* src, const float* const stats[4],
                                      const float* bias, double epsilon, float* wd, float* bd, CUDAContext* ctx) {
  if (channels == 0) return;
  const Stats s{stats[0], stats[1], stats[2], stats[3], bias};
  if (row > 0) FoldWeightsCUDA<<<Blocks(channels * row), 256, 0, ctx->stream()>>>(channels * row, row, src, s, epsilon, wd);
  FoldBiasCUDA<<<Blocks(channels), 256, 0, ctx->stream()>>>(channels, s, epsilon, bd);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(FoldBatchNormWeights, FoldBatchNormWeightsOp<CUDAContext>);

}  // namespace hetnet
