// TopK on CUDA: one thread per (outer, inner) column running TopKColumn / TopKGradColumn
// (top_k_op.h), the CPU loop's column functions. O(n * k) per thread: simple, slow for large k.
#include "device/cuda/cuda_context.h"
#include "operators/top_k_op.h"

namespace hetnet {

namespace {
template <typename T>
__global__ void TopKFwdKernel(TopKGeom g, const T* x, T* vals, int64_t* idx, int64_t* flat, bool largest) {
  HN_CUDA_KERNEL_LOOP(c, g.outer * g.inner) { TopKColumn(c, g, x, vals, idx, flat, largest); }
}
__global__ void TopKGradKernel(TopKGeom g, const float* dv, const int64_t* idx, float* dx) {
  HN_CUDA_KERNEL_LOOP(c, g.outer * g.inner) { TopKGradColumn(c, g, dv, idx, dx); }
}
}  // namespace

template <>
void TopKForward<CUDAContext>(const caffe2::OperatorDef& def, DataType t, TopKGeom g, const void* x, void* vals,
                              int64_t* idx, int64_t* flat, bool largest, CUDAContext* ctx) {
  const int64_t m = g.outer * g.inner;
  if (m == 0) return;
  DispatchRealOrIntegerType(def, t, 0, [&](auto zero) {
    using T = decltype(zero);
    TopKFwdKernel<T><<<CudaBlocks(m), kCudaThreads, 0, ctx->stream()>>>(g, static_cast<const T*>(x),
                                                                       static_cast<T*>(vals), idx, flat, largest);
  });
  HN_CUDA_CHECK(cudaGetLastError());
}
template <>
void TopKBackward<CUDAContext>(TopKGeom g, const float* dv, const int64_t* idx, float* dx, CUDAContext* ctx) {
  const int64_t m = g.outer * g.inner;
  if (m == 0) return;
  TopKGradKernel<<<CudaBlocks(m), kCudaThreads, 0, ctx->stream()>>>(g, dv, idx, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(TopK, TopKOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(TopKGradient, TopKGradientOp<CUDAContext>);

}  // namespace hetnet
