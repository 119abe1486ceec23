#include <cub/block/block_reduce.cuh>

#include "device/cuda/cuda_context.h"
#include "operators/accuracy_op.h"

namespace hetnet {

namespace {
constexpr int kThreads = 256;
using BlockCount = cub::BlockReduce<int64_t, kThreads>;

// A single block; each thread ranks whole rows.
__global__ void AccuracyCUDA(int64_t N, int64_t D, int top_k, const float* x, const int32_t* label, float* y) {
  __shared__ BlockCount::TempStorage tmp;
  int64_t correct = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
    if (AccuracyRowCorrect(x + i * D, D, label[i], top_k)) ++correct;
  correct = BlockCount(tmp).Sum(correct);
  if (threadIdx.x == 0) y[0] = N > 0 ? static_cast<float>(correct) / static_cast<float>(N) : 0.f;
}
}  // namespace

template <>
void AccuracyKernel<CUDAContext>(int64_t N, int64_t D, int top_k, const float* x, const int32_t* label, float* y,
                                 CUDAContext* ctx) {
  AccuracyCUDA<<<1, kThreads, 0, ctx->stream()>>>(N, D, top_k, x, label, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Accuracy, AccuracyOp<CUDAContext>);

}  // namespace hetnet
