#include "device/cuda/cuda_context.h"
#include "operators/adam_op.h"

namespace hetnet {

namespace {
__global__ void AdamCUDA(int64_t n, float* w, const float* g, float* m, float* v, float b1, float b2, float eps,
                         float correction, const float* lr) {
  HN_CUDA_KERNEL_LOOP(i, n) AdamElement(i, w, g, m, v, b1, b2, eps, correction, lr);
}
}  // namespace

template <>
void AdamKernel<CUDAContext>(int64_t n, float* w, const float* g, float* m, float* v, float b1, float b2, float eps,
                             float correction, const float* lr, CUDAContext* ctx) {
  if (n == 0) return;
  AdamCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, w, g, m, v, b1, b2, eps, correction, lr);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Adam, AdamOp<CUDAContext>);

}  // namespace hetnet
