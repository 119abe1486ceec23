// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// GroupNorm on CUDA: one thread per (n, group) (forward, dX) or per channel (dgamma, dbeta),
// grid-stride loops over the functions the CPU path runs (group_norm_op.h). Simple, not fast.
#include "device/cuda/cuda_context.h"
#include "operators/group_norm_op.h"

namespace hetnet {

namespace {
__global__ void GroupNormFwdKernel(GroupNormGeom G, float eps, const float* x, const float* gamma, const float* beta,
                                   float* y, float* mean, float* inv) {
  HN_CUDA_KERNEL_LOOP(i, G.n * G.g) { GroupNormGroup(i, G, eps, x, gamma, beta, y, mean, inv); }
}
__global__ void GroupNormGradGroupKernel(GroupNormGeom G, const float* dy, const float* x, const float* gamma,
                                         const float* mean, const float* inv, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, G.n * G.g) { GroupNormGradGroup(i, G, dy, x, gamma, mean, inv, dx); }
}
__global__ void GroupNormGradChannelKernel(GroupNormGeom G, const float* dy, const float* x, const float* mean,
                                           const float* inv, float* dgamma, float* dbeta) {
  HN_CUDA_KERNEL_LOOP(c, G.g * G.d) { GroupNormAffineGradChannel(c, G, dy, x, mean, inv, dgamma, dbeta); }
}
}  // namespace

template <>
void GroupNormForward<CUDAContext>(GroupNormGeom G, float eps, const float* x, const float* gamma, const float* beta,
                                   float* y, float* mean, float* inv, CUDAContext* ctx) {
  const int64_t m = G.n * G.g;
  if (m == 0) return;
  GroupNormFwdKernel<<<CudaBlocks(m), kCudaThreads, 0, ctx->stream()>>>(G, eps, x, gamma, beta, y, mean, inv);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void GroupNormBackward<CUDAContext>(GroupNormGeom G, const float* dy, const float* x, const float* gamma,
                                    const float* mean, const float* inv, float* dx, float* dgamma, float* dbeta,
                                    CUDAContext* ctx) {
  // Channel sums first (same stream): dX may be dY's buffer.
  const int64_t c = G.g * G.d, m = G.n * G.g;
  if (c > 0) {
    GroupNormGradChannelKernel<<<CudaBlocks(c), kCudaThreads, 0, ctx->stream()>>>(G, dy, x, mean, inv, dgamma, dbeta);
    HN_CUDA_CHECK(cudaGetLastError());
  }
  if (m > 0) {
    GroupNormGradGroupKernel<<<CudaBlocks(m), kCudaThreads, 0, ctx->stream()>>>(G, dy, x, gamma, mean, inv, dx);
    HN_CUDA_CHECK(cudaGetLastError());
  }
}

REGISTER_CUDA_OPERATOR(GroupNorm, GroupNormOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(GroupNormGradient, GroupNormGradientOp<CUDAContext>);

}  // namespace hetnet
