// NOT VERIFIED ON A GPU
// Gather and GatherGradient on CUDA: one thread per output element (Gather) or per dOUTPUT element
// with atomicAdd (GatherGradient: repeated indices accumulate; float sums in any order). An invalid
// index is recorded (the smallest position, atomicMin) and reported after the kernel: one small
// device-to-host copy per run. Compiled here with nvcc, never run: the machine had no GPU.
#include "device/cuda/cuda_context.h"
#include "operators/gather_op.h"

namespace hetnet {

namespace {
template <typename U, typename I>
__global__ void GatherKernel(GatherGeom g, const U* data, const I* indices, U* out,
                             unsigned long long* first_bad) {
  const int64_t total = g.outer * g.k * g.inner;
  HN_CUDA_KERNEL_LOOP(t, total) {
    const int64_t q = t % g.inner, j = (t / g.inner) % g.k, o = t / (g.inner * g.k);
    int64_t i = 0;
    if (WrapGatherIndex(indices[j], g.n, &i)) {
      out[t] = data[(o * g.n + i) * g.inner + q];
    } else {
      atomicMin(first_bad, static_cast<unsigned long long>(j));
    }
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
void Launch(const GatherGeom& g, const void* data, const I* indices, void* out, unsigned long long* bad,
            CUDAContext* ctx) {
  const int64_t total = g.outer * g.k * g.inner;
  GatherKernel<U, I><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(
      g, static_cast<const U*>(data), indices, static_cast<U*>(out), bad);
}
}  // namespace

template <typename I, class Context>
int64_t GatherRows(const GatherGeom& g, size_t itemsize, const void* data, const I* indices, void* out,
                   Context* ctx) {
  const int64_t total = g.outer * g.k * g.inner;
  if (total == 0) return -1;
  Tensor flag({1}, DataType::Int64, ctx->device());
  unsigned long long* bad = reinterpret_cast<unsigned long long*>(flag.mutable_data<int64_t>());
  const unsigned long long none = ~0ull;
  ctx->CopyBytes(sizeof(none), &none, Device::CPU(), bad, ctx->device());
  switch (itemsize) {
    case 1: Launch<uint8_t>(g, data, indices, out, bad, ctx); break;
    case 2: Launch<uint16_t>(g, data, indices, out, bad, ctx); break;
    case 4: Launch<uint32_t>(g, data, indices, out, bad, ctx); break;
    case 8: Launch<uint64_t>(g, data, indices, out, bad, ctx); break;
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
