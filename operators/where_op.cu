// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// Where on CUDA: one grid-stride kernel over WhereAt (where_op.h), the CPU loop's element function.
// Compiled here with nvcc, never run: the machine that wrote it had no GPU.
#include "device/cuda/cuda_context.h"
#include "operators/where_op.h"

namespace hetnet {

namespace {
template <typename U>
__global__ void WhereKernel(math::BroadcastIndex ix, int64_t total, const bool* c, const U* x, const U* y, U* z) {
  HN_CUDA_KERNEL_LOOP(i, total) WhereAt(ix, i, c, x, y, z);
}
template <typename U>
void Launch(const math::BroadcastIndex& ix, int64_t total, const bool* c, const void* x, const void* y, void* z,
            CUDAContext* ctx) {
  WhereKernel<U><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(
      ix, total, c, static_cast<const U*>(x), static_cast<const U*>(y), static_cast<U*>(z));
}
}  // namespace

template <>
void WhereSelect<CUDAContext>(const math::BroadcastIndex& ix, int64_t total, size_t itemsize, const bool* c,
                              const void* x, const void* y, void* z, CUDAContext* ctx) {
  if (total == 0) return;
  switch (itemsize) {
    case 1: Launch<uint8_t>(ix, total, c, x, y, z, ctx); break;
    case 2: Launch<uint16_t>(ix, total, c, x, y, z, ctx); break;
    case 4: Launch<uint32_t>(ix, total, c, x, y, z, ctx); break;
    case 8: Launch<uint64_t>(ix, total, c, x, y, z, ctx); break;
    default: HN_THROW(kUnsupported, "Where: ", itemsize, "-byte elements are not supported");
  }
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Where, WhereOp<CUDAContext>);

}  // namespace hetnet
