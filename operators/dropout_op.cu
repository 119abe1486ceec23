// Dropout on CUDA: masking kernels over uniform draws (see dropout_op.h).
#include "device/cuda/cuda_context.h"
#include "operators/dropout_op.h"

namespace hetnet {

namespace {
__global__ void DropoutCUDA(int64_t n, float ratio, float scale, const float* x, const float* u, float* y, bool* mask) {
  HN_CUDA_KERNEL_LOOP(i, n) {
    const bool keep = u[i] >= ratio;
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : 0.f;
  }
}
__global__ void DropoutGradCUDA(int64_t n, float scale, const float* dy, const bool* mask, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = (!mask || mask[i]) ? dy[i] * scale : 0.f;
}
}  // namespace

template <>
void DropoutKernel<CUDAContext>(int64_t n, float ratio, const float* x, const float* u, float* y, bool* mask,
                                CUDAContext* ctx) {
  if (n == 0) return;
  DropoutCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, ratio, 1.f / (1.f - ratio), x, u, y, mask);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void DropoutGradKernel<CUDAContext>(int64_t n, float scale, const float* dy, const bool* mask, float* dx,
                                    CUDAContext* ctx) {
  if (n == 0) return;
  DropoutGradCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, scale, dy, mask, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Dropout, DropoutOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(DropoutGrad, DropoutGradOp<CUDAContext>);

}  // namespace hetnet
