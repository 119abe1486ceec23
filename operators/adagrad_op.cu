#include "device/cuda/cuda_context.h"
#include "operators/adagrad_op.h"

namespace hetnet {

namespace {
__global__ void AdagradCUDA(int64_t n, float* w, const float* g, float* h, float eps, float decay, const float* lr) {
  HN_CUDA_KERNEL_LOOP(i, n) AdagradElement(i, w, g, h, eps, decay, lr);
}
}  // namespace

template <>
void AdagradKernel<CUDAContext>(int64_t n, float* w, const float* g, float* h, float eps, float decay, const float* lr,
                                CUDAContext* ctx) {
  if (n == 0) return;
  AdagradCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, w, g, h, eps, decay, lr);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Adagrad, AdagradOp<CUDAContext>);

}  // namespace hetnet
