#include <limits>

#include "device/cuda/cuda_context.h"
#include "operators/reduce_ops.h"

namespace hetnet {

namespace {
// One thread per output element, walking its reduced elements.
template <typename T>
__global__ void ReduceCUDA(StridedIndex kept, StridedIndex reduced, int64_t y_numel, int64_t count, ReduceKind kind,
                           const T* x, T* y) {
  HN_CUDA_KERNEL_LOOP(o, y_numel) y[o] = ReduceOne<T>(kind, x + kept.Offset(o), reduced, count);
}
__global__ void ReduceGradCUDA(StridedIndex back, int64_t n, float scale, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, n) dx[i] = dy[back.Offset(i)] * scale;
}
}  // namespace

template <typename T, class Context>
void ReduceKernel(const ReducePlan& p, ReduceKind kind, const T* x, T* y, Context* ctx) {
  if (p.y_numel == 0) return;
  ReduceCUDA<T><<<CudaBlocks(p.y_numel), kCudaThreads, 0, ctx->stream()>>>(p.kept, p.reduced, p.y_numel, p.count,
                                                                           kind, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
template void ReduceKernel<float, CUDAContext>(const ReducePlan&, ReduceKind, const float*, float*, CUDAContext*);
template void ReduceKernel<double, CUDAContext>(const ReducePlan&, ReduceKind, const double*, double*, CUDAContext*);
template void ReduceKernel<int32_t, CUDAContext>(const ReducePlan&, ReduceKind, const int32_t*, int32_t*, CUDAContext*);
template void ReduceKernel<int64_t, CUDAContext>(const ReducePlan&, ReduceKind, const int64_t*, int64_t*, CUDAContext*);
template void ReduceKernel<bool, CUDAContext>(const ReducePlan&, ReduceKind, const bool*, bool*, CUDAContext*);

template <>
void ReduceGradientKernel<CUDAContext>(const ReducePlan& p, int64_t x_numel, float scale, const float* dy, float* dx,
                                       CUDAContext* ctx) {
  if (x_numel == 0) return;
  ReduceGradCUDA<<<CudaBlocks(x_numel), kCudaThreads, 0, ctx->stream()>>>(p.back, x_numel, scale, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(ReduceSum, ReduceOp<CUDAContext, ReduceKind::kSum>);
REGISTER_CUDA_OPERATOR(ReduceMean, ReduceOp<CUDAContext, ReduceKind::kMean>);
REGISTER_CUDA_OPERATOR(ReduceMax, ReduceOp<CUDAContext, ReduceKind::kMax>);
REGISTER_CUDA_OPERATOR(ReduceMin, ReduceOp<CUDAContext, ReduceKind::kMin>);
REGISTER_CUDA_OPERATOR(ReduceProd, ReduceOp<CUDAContext, ReduceKind::kProd>);
REGISTER_CUDA_OPERATOR(ReduceLogSumExp, ReduceOp<CUDAContext, ReduceKind::kLogSumExp>);
REGISTER_CUDA_OPERATOR(ReduceSumGradient, ReduceGradientOp<CUDAContext, false>);
REGISTER_CUDA_OPERATOR(ReduceMeanGradient, ReduceGradientOp<CUDAContext, true>);

}  // namespace hetnet
