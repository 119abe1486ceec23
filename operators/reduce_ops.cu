#include <limits>

#include "device/cuda/cuda_context.h"
#include "operators/reduce_ops.h"

namespace hetnet {

namespace {
template <typename T> struct AccOf { using type = T; };
template <> struct AccOf<int32_t> { using type = int64_t; };

// One thread per output element, walking its reduced elements.
template <typename T>
__global__ void ReduceCUDA(StridedIndex kept, StridedIndex reduced, int64_t y_numel, int64_t count, bool mean,
                           const T* x, T* y) {
  using Acc = typename AccOf<T>::type;
  HN_CUDA_KERNEL_LOOP(o, y_numel) {
    const T* base = x + kept.Offset(o);
    Acc s = 0;
    for (int64_t r = 0; r < count; ++r) s += base[reduced.Offset(r)];
    if (mean) y[o] = count > 0 ? static_cast<T>(s / static_cast<Acc>(count)) : std::numeric_limits<T>::quiet_NaN();
    else y[o] = static_cast<T>(s);
  }
}
__global__ void ReduceGradCUDA(StridedIndex back, int64_t n, float scale, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = dy[back.Offset(i)] * scale;
}
}  // namespace

template <typename T, class Context>
void ReduceKernel(const ReducePlan& p, bool mean, const T* x, T* y, Context* ctx) {
  if (p.y_numel == 0) return;
  ReduceCUDA<T><<<CudaBlocks(p.y_numel), kCudaThreads, 0, ctx->stream()>>>(p.kept, p.reduced, p.y_numel, p.count,
                                                                           mean, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
template void ReduceKernel<float, CUDAContext>(const ReducePlan&, bool, const float*, float*, CUDAContext*);
template void ReduceKernel<double, CUDAContext>(const ReducePlan&, bool, const double*, double*, CUDAContext*);
template void ReduceKernel<int32_t, CUDAContext>(const ReducePlan&, bool, const int32_t*, int32_t*, CUDAContext*);
template void ReduceKernel<int64_t, CUDAContext>(const ReducePlan&, bool, const int64_t*, int64_t*, CUDAContext*);

template <>
void ReduceGradientKernel<CUDAContext>(const ReducePlan& p, int64_t x_numel, float scale, const float* dy, float* dx,
                                       CUDAContext* ctx) {
  if (x_numel == 0) return;
  ReduceGradCUDA<<<CudaBlocks(x_numel), kCudaThreads, 0, ctx->stream()>>>(p.back, x_numel, scale, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(ReduceSum, ReduceOp<CUDAContext, false>);
REGISTER_CUDA_OPERATOR(ReduceMean, ReduceOp<CUDAContext, true>);
REGISTER_CUDA_OPERATOR(ReduceSumGradient, ReduceGradientOp<CUDAContext, false>);
REGISTER_CUDA_OPERATOR(ReduceMeanGradient, ReduceGradientOp<CUDAContext, true>);

}  // namespace hetnet
