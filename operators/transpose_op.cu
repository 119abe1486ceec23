#include "device/cuda/cuda_context.h"
#include "operators/transpose_op.h"

namespace hetnet {

namespace {
template <typename T>
__global__ void TransposeCUDA(StridedIndex src, int64_t n, const T* x, T* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = x[src.Offset(i)];
}
template <typename T>
void Launch(const StridedIndex& src, int64_t n, const void* x, void* y, CUDAContext* ctx) {
  TransposeCUDA<T><<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(src, n, static_cast<const T*>(x),
                                                                       static_cast<T*>(y));
  HN_CUDA_CHECK(cudaGetLastError());
}
}  // namespace

template <>
void TransposeKernel<CUDAContext>(const StridedIndex& src, int64_t n, size_t item_size, const void* x, void* y,
                                  CUDAContext* ctx) {
  if (n == 0) return;
  switch (item_size) {
    case 1: return Launch<uint8_t>(src, n, x, y, ctx);
    case 2: return Launch<uint16_t>(src, n, x, y, ctx);
    case 4: return Launch<uint32_t>(src, n, x, y, ctx);
    case 8: return Launch<uint64_t>(src, n, x, y, ctx);
    default: HN_THROW(kUnsupported, "Transpose: unsupported element size ", item_size);
  }
}

REGISTER_CUDA_OPERATOR(Transpose, TransposeOp<CUDAContext>);

}  // namespace hetnet
