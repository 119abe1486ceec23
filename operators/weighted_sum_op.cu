#include "device/cuda/cuda_context.h"
#include "operators/weighted_sum_op.h"

namespace hetnet {

namespace {
__global__ void WeightedAxpyCUDA(int64_t n, const float* w, const float* x, float* y, bool accumulate) {
  const float a = w[0];
  HN_CUDA_KERNEL_LOOP(i, n) WeightedAxpyElement(i, a, x, y, accumulate);
}
}  // namespace

template <>
void WeightedAxpyKernel<CUDAContext>(int64_t n, const float* w, const float* x, float* y, bool accumulate,
                                     CUDAContext* ctx) {
  if (n == 0) return;
  WeightedAxpyCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, w, x, y, accumulate);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(WeightedSum, WeightedSumOp<CUDAContext>);

}  // namespace hetnet
