// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// Tile on CUDA: one thread per output element (forward) or per dX element summing its copies
// (gradient), grid-stride loops.
#include "device/cuda/cuda_context.h"
#include "operators/tile_op.h"

namespace hetnet {

namespace {
template <typename U>
__global__ void TileKernel(TileGeom g, const U* x, U* y) {
  HN_CUDA_KERNEL_LOOP(t, g.outer * g.tiles * g.inner) {
    const int64_t q = t % g.inner, o = t / (g.inner * g.tiles);
    y[t] = x[o * g.inner + q];
  }
}
__global__ void TileGradKernel(TileGeom g, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(t, g.outer * g.inner) {
    const int64_t q = t % g.inner, o = t / g.inner;
    float s = 0.f;
    for (int64_t k = 0; k < g.tiles; ++k) s += dy[(o * g.tiles + k) * g.inner + q];
    dx[t] = s;
  }
}
template <typename U>
void Launch(TileGeom g, const void* x, void* y, CUDAContext* ctx) {
  const int64_t total = g.outer * g.tiles * g.inner;
  TileKernel<U><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(g, static_cast<const U*>(x),
                                                                       static_cast<U*>(y));
}
}  // namespace

template <>
void TileForward<CUDAContext>(TileGeom g, size_t itemsize, const void* x, void* y, CUDAContext* ctx) {
  if (g.outer * g.tiles * g.inner == 0) return;
  switch (itemsize) {
    case 1: Launch<uint8_t>(g, x, y, ctx); break;
    case 2: Launch<uint16_t>(g, x, y, ctx); break;
    case 4: Launch<uint32_t>(g, x, y, ctx); break;
    case 8: Launch<uint64_t>(g, x, y, ctx); break;
    default: HN_THROW(kUnsupported, "Tile: ", itemsize, "-byte elements are not supported");
  }
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void TileBackward<CUDAContext>(TileGeom g, const float* dy, float* dx, CUDAContext* ctx) {
  if (g.outer * g.inner == 0) return;
  TileGradKernel<<<CudaBlocks(g.outer * g.inner), kCudaThreads, 0, ctx->stream()>>>(g, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(Tile, TileOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(TileGradient, TileGradientOp<CUDAContext>);

}  // namespace hetnet
