#include "device/cuda/cuda_context.h"
#include "operators/rmsprop_op.h"

namespace hetnet {

namespace {
__global__ void RmsPropCUDA(int64_t n, const float* g, float* ng, float* ms, float* mom, float decay, float momentum,
                            float eps, const float* lr) {
  HN_CUDA_KERNEL_LOOP(i, n) RmsPropElement(i, g, ng, ms, mom, decay, momentum, eps, lr);
}
}  // namespace

template <>
void RmsPropKernel<CUDAContext>(int64_t n, const float* g, float* ng, float* ms, float* mom, float decay,
                                float momentum, float eps, const float* lr, CUDAContext* ctx) {
  if (n == 0) return;
  RmsPropCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, g, ng, ms, mom, decay, momentum, eps, lr);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(RmsProp, RmsPropOp<CUDAContext>);

}  // namespace hetnet
