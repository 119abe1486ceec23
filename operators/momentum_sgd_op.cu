#include "device/cuda/cuda_context.h"
#include "operators/momentum_sgd_op.h"

namespace hetnet {

namespace {
__global__ void MomentumSGDCUDA(int64_t n, const float* g, const float* m, float* ng, float* nm, const float* lr,
                                float mu, bool nesterov, float* param) {
  const float LR = lr[0];
  HN_CUDA_KERNEL_LOOP(i, n) MomentumSGDElement(i, g, m, ng, nm, LR, mu, nesterov, param);
}
}  // namespace

template <>
void MomentumSGDKernel<CUDAContext>(int64_t n, const float* g, const float* m, float* ng, float* nm, const float* lr,
                                    float mu, bool nesterov, float* param, CUDAContext* ctx) {
  if (n == 0) return;
  MomentumSGDCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, g, m, ng, nm, lr, mu, nesterov, param);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(MomentumSGDUpdate, MomentumSGDUpdateOp<CUDAContext>);

}  // namespace hetnet
