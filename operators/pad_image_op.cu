// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// PadImage on CUDA: one thread per output element (grid-stride) over PadSourceOffset, the index
// function the CPU path uses; the gradient adds dY into dX with atomicAdd (reflect/edge pixels are
// read by several outputs).
#include "device/cuda/cuda_context.h"
#include "operators/pad_image_op.h"

namespace hetnet {

namespace {
__global__ void PadImageKernel(PadGeom g, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(t, g.nc * g.oh * g.ow) {
    const int64_t s = PadSourceOffset(t, g);
    y[t] = s < 0 ? g.value : x[s];
  }
}
__global__ void PadImageGradKernel(PadGeom g, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(t, g.nc * g.oh * g.ow) {
    const int64_t s = PadSourceOffset(t, g);
    if (s >= 0) atomicAdd(dx + s, dy[t]);
  }
}
}  // namespace

template <>
void PadImageForward<CUDAContext>(const PadGeom& g, const float* x, float* y, CUDAContext* ctx) {
  const int64_t total = g.nc * g.oh * g.ow;
  if (total == 0) return;
  PadImageKernel<<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(g, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void PadImageBackward<CUDAContext>(const PadGeom& g, const float* dy, float* dx, CUDAContext* ctx) {
  const int64_t n = g.nc * g.h * g.w, total = g.nc * g.oh * g.ow;
  if (n == 0) return;
  HN_CUDA_CHECK(cudaMemsetAsync(dx, 0, n * sizeof(float), ctx->stream()));
  if (total == 0) return;
  PadImageGradKernel<<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(g, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(PadImage, PadImageOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(PadImageGradient, PadImageGradientOp<CUDAContext>);

}  // namespace hetnet
