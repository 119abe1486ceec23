// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// Exp, Log, Abs, Sqr, Negative, Pow and AbsGradient on CUDA: one grid-stride kernel per op over the
// same per-element functions as the CPU loops (unary_math_ops.h). Compiled here with nvcc, never run:
// the machine that wrote it had no GPU.
#include "device/cuda/cuda_context.h"
#include "operators/unary_math_ops.h"

namespace hetnet {

namespace {
__global__ void ExpCUDA(int64_t n, const float* x, float* y) { HN_CUDA_KERNEL_LOOP(i, n) y[i] = ExpValue(x[i]); }
__global__ void LogCUDA(int64_t n, const float* x, float* y) { HN_CUDA_KERNEL_LOOP(i, n) y[i] = LogValue(x[i]); }
__global__ void AbsCUDA(int64_t n, const float* x, float* y) { HN_CUDA_KERNEL_LOOP(i, n) y[i] = AbsValue(x[i]); }
__global__ void SqrCUDA(int64_t n, const float* x, float* y) { HN_CUDA_KERNEL_LOOP(i, n) y[i] = SqrValue(x[i]); }
__global__ void AbsGradientCUDA(int64_t n, const float* x, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = AbsGradientValue(x[i], dy[i]);
}
__global__ void PowCUDA(int64_t n, const float* x, float e, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = PowValue(x[i], e);
}
template <typename T>
__global__ void NegativeCUDA(int64_t n, const T* x, T* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = NegateValue(x[i]);
}
}  // namespace

#define HN_UNARY_CUDA(Name)                                                                   \
  template <>                                                                                 \
  void Name##Kernel<CUDAContext>(int64_t n, const float* x, float* y, CUDAContext* ctx) {     \
    if (n == 0) return;                                                                       \
    Name##CUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);                   \
    HN_CUDA_CHECK(cudaGetLastError());                                                        \
  }
HN_UNARY_CUDA(Exp)
HN_UNARY_CUDA(Log)
HN_UNARY_CUDA(Abs)
HN_UNARY_CUDA(Sqr)
#undef HN_UNARY_CUDA

template <>
void AbsGradientKernel<CUDAContext>(int64_t n, const float* x, const float* dy, float* dx, CUDAContext* ctx) {
  if (n == 0) return;
  AbsGradientCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void PowKernel<CUDAContext>(int64_t n, const float* x, float exponent, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  PowCUDA<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, exponent, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
#define HN_NEGATIVE_CUDA(T)                                                               \
  template <>                                                                             \
  void NegativeKernel<T, CUDAContext>(int64_t n, const T* x, T* y, CUDAContext* ctx) {    \
    if (n == 0) return;                                                                   \
    NegativeCUDA<T><<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, x, y);          \
    HN_CUDA_CHECK(cudaGetLastError());                                                    \
  }
HN_NEGATIVE_CUDA(float)
HN_NEGATIVE_CUDA(double)
HN_NEGATIVE_CUDA(int32_t)
HN_NEGATIVE_CUDA(int64_t)
#undef HN_NEGATIVE_CUDA

REGISTER_CUDA_OPERATOR(Exp, ExpOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Log, LogOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Abs, AbsOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(AbsGradient, AbsGradientOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Sqr, SqrOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Negative, NegativeOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Pow, PowOp<CUDAContext>);

}  // namespace hetnet
