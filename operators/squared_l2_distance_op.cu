// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// SquaredL2Distance on CUDA: one thread per row (forward) or per element (gradient), grid-stride,
// running the functions the CPU path runs (squared_l2_distance_op.h).
#include "device/cuda/cuda_context.h"
#include "operators/squared_l2_distance_op.h"

namespace hetnet {

namespace {
__global__ void SquaredL2Kernel(int64_t n, int64_t d, const float* x, const float* y, float* z) {
  HN_CUDA_KERNEL_LOOP(i, n) { SquaredL2Row(i, d, x, y, z); }
}
__global__ void SquaredL2GradKernel(int64_t total, int64_t d, const float* x, const float* y, const float* dz,
                                    float* dx, float* dy) {
  HN_CUDA_KERNEL_LOOP(t, total) { SquaredL2GradElem(t, d, x, y, dz, dx, dy); }
}
}  // namespace

template <>
void SquaredL2Forward<CUDAContext>(int64_t n, int64_t d, const float* x, const float* y, float* z, CUDAContext* ctx) {
  if (n == 0) return;
  SquaredL2Kernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, d, x, y, z);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void SquaredL2Backward<CUDAContext>(int64_t n, int64_t d, const float* x, const float* y, const float* dz, float* dx,
                                    float* dy, CUDAContext* ctx) {
  if (n * d == 0) return;
  SquaredL2GradKernel<<<CudaBlocks(n * d), kCudaThreads, 0, ctx->stream()>>>(n * d, d, x, y, dz, dx, dy);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(SquaredL2Distance, SquaredL2DistanceOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SquaredL2DistanceGradient, SquaredL2DistanceGradientOp<CUDAContext>);

}  // namespace hetnet
