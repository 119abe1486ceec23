// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// ArgMax / ArgMin on CUDA: one thread per output element over ArgReduceAt (arg_ops.h), the CPU loop's
// element function. Compiled here with nvcc, never run: the machine that wrote it had no GPU.
#include "device/cuda/cuda_context.h"
#include "operators/arg_ops.h"

namespace hetnet {

namespace {
template <bool IsMax, typename T>
__global__ void ArgReduceKernel(int64_t m, int64_t n, int64_t inner, const T* x, int64_t* y) {
  HN_CUDA_KERNEL_LOOP(j, m) y[j] = ArgReduceAt<IsMax, T>(x, n, inner, j);
}
}  // namespace

template <bool IsMax, typename T, class Context>
void ArgReduce(int64_t outer, int64_t n, int64_t inner, const T* x, int64_t* y, Context* ctx) {
  const int64_t m = outer * inner;
  if (m == 0) return;
  ArgReduceKernel<IsMax, T><<<CudaBlocks(m), kCudaThreads, 0, ctx->stream()>>>(m, n, inner, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
#define HN_INSTANTIATE_ARG(T)                                                                            \
  template void ArgReduce<true, T, CUDAContext>(int64_t, int64_t, int64_t, const T*, int64_t*, CUDAContext*); \
  template void ArgReduce<false, T, CUDAContext>(int64_t, int64_t, int64_t, const T*, int64_t*, CUDAContext*);
HN_INSTANTIATE_ARG(float)
HN_INSTANTIATE_ARG(double)
HN_INSTANTIATE_ARG(int32_t)
HN_INSTANTIATE_ARG(int64_t)
#undef HN_INSTANTIATE_ARG

REGISTER_CUDA_OPERATOR(ArgMax, ArgReduceOp<CUDAContext, true>);
REGISTER_CUDA_OPERATOR(ArgMin, ArgReduceOp<CUDAContext, false>);

}  // namespace hetnet
