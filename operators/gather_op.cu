// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// Gather and GatherGradient on CUDA: one thread per output element (Gather) or per dOUTPUT element
// with atomicAdd (GatherGradient: repeated indices accumulate; float sums in any order). Indices are
// checked by their own kernel (the smallest invalid position, atomicMin) and reported after the
// copy: one small device-to-host copy and a stream sync per run. Compiled here with nvcc, never run: the machine had no GPU.
#include "device/cuda/cuda_context.h"
#include "operators/gather_op.h"

namespace hetnet {

namespace {
// Every index is checked (also when the output is empty, as on CPU); the copy skips invalid ones.
template <typename I>
__global__ void CheckIndicesKernel(int64_t k, int64_t n, const I* indices, unsigned long long* first_bad) {
  HN_CUDA_KERNEL_LOOP(j, k) {
    int64_t i = 0;
    if (!WrapGatherIndex(indices[j], n, &i)) atomicMin(first_bad, static_cast<unsigned long long>(j));
  }
}
template <typename U, typename I>
__global__ void GatherKernel(GatherGeom g, const U* data, const I* indices, U* out) {
  const int64_t total = g.outer * g.k * g.inner;
  HN_CUDA_KERNEL_LOOP(t, total) {
    const int64_t q = t % g.inner, j = (t / g.inner) % g.k, o = t / (g.inner * g.k);
    int64_t i = 0;
    if (WrapGatherIndex(indices[j], g.n, &i)) out[t] = data[(o * g.n + i) * g.inner + q];
  }
}
template <typename I>
__global__ void GatherGradKernel(GatherGeom g, const float* dout, const I* indices, float* ddata) {
  const int64_t total = g.outer * g.k * g.inner;
  HN_CUDA_KERNEL_LOOP(t, total) {
    const int64_t q = t % g.inner, j = (t / g.inner) % g.k, o = t / (g.inner * g.k);
    int64_t i = 0;
    if (WrapGatherIndex(indices[j], g.n, &i)) atomicAdd(ddata + (o * g.n + i) * g.inner + q, dout[t]);
  }
}
template <typename U, typename I>
void Launch(const GatherGeom& g, const void* data, const I* indices, void* out, CUDAContext* ctx) {
  const int64_t total = g.outer * g.k * g.inner;
  if (total == 0) return;
  GatherKernel<U, I><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(
      g, static_cast<const U*>(data), indices, static_cast<U*>(out));
}
}  // namespace

template <typename I, class Context>
int64_t GatherRows(const GatherGeom& g, size_t itemsize, const void* data, const I* indices, void* out,
                   Context* ctx) {
  if (g.k == 0) return -1;
  Tensor flag({1}, DataType::Int64, ctx->device());
  unsigned long long* bad = reinterpret_cast<unsigned long long*>(flag.mutable_data<int64_t>());
  const unsigned long long none = ~0ull;
  ctx->CopyBytes(sizeof(none), &none, Device::CPU(), bad, ctx->device());
  CheckIndicesKernel<I><<<CudaBlocks(g.k), kCudaThreads, 0, ctx->stream()>>>(g.k, g.n, indices, bad);
  switch (itemsize) {
    case 1: Launch<uint8_t>(g, data, indices, out, ctx); break;
    case 2: Launch<uint16_t>(g, data, indices, out, ctx); break;
    case 4: Launch<uint32_t>(g, data, indices, out, ctx); break;
    case 8: Launch<uint64_t>(g, data, indices, out, ctx); break;
    default: HN_THROW(kUnsupported, "Gather: ", itemsize, "-byte elements are not supported");
  }
  HN_CUDA_CHECK(cudaGetLastError());
  unsigned long long host = none;
  ctx->CopyBytes(sizeof(host), bad, ctx->device(), &host, Device::CPU());
  HN_CUDA_CHECK(cudaStreamSynchronize(ctx->stream()));
  return host == none ? -1 : static_cast<int64_t>(host);
}

template <typename I, class Context>
void GatherRowsGradient(const GatherGeom& g, const float* dout, const I* indices, float* ddata, Context* ctx) {
  const int64_t n = g.outer * g.n * g.inner, total = g.outer * g.k * g.inner;
  if (n == 0) return;
  HN_CUDA_CHECK(cudaMemsetAsync(ddata, 0, n * sizeof(float), ctx->stream()));
  if (total == 0) return;
  GatherGradKernel<I><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(g, dout, indices, ddata);
  HN_CUDA_CHECK(cudaGetLastError());
}

template int64_t GatherRows<int32_t, CUDAContext>(const GatherGeom&, size_t, const void*, const int32_t*, void*,
                                                  CUDAContext*);
template int64_t GatherRows<int64_t, CUDAContext>(const GatherGeom&, size_t, const void*, const int64_t*, void*,
                                                  CUDAContext*);
template void GatherRowsGradient<int32_t, CUDAContext>(const GatherGeom&, const float*, const int32_t*, float*,
                                                       CUDAContext*);
template void GatherRowsGradient<int64_t, CUDAContext>(const GatherGeom&, const float*, const int64_t*, float*,
                                                       CUDAContext*);

REGISTER_CUDA_OPERATOR(Gather, GatherOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(GatherGradient, GatherGradientOp<CUDAContext>);

}  // namespace hetnet
