// NOT VERIFIED ON A GPU (compiled with nvcc here; the machine has no GPU).
// Segment reducers on CUDA: indices checked by their own kernel (smallest bad position, atomicMin,
// read back with one sync); the forward op runs one thread per output element looping over its
// segment; the gradient one thread per (segment, column) adding into dDATA with atomicAdd (repeated
// indices accumulate). LENGTHS -> offsets is done on the host (shared with CPU, in the .cc).
#include "device/cuda/cuda_context.h"
#include "operators/lengths_reducer_ops.h"

namespace hetnet {

namespace {
template <typename I>
__global__ void CheckSegmentIndicesKernel(int64_t k, int64_t n, const I* indices, unsigned long long* first_bad) {
  HN_CUDA_KERNEL_LOOP(j, k) {
    const int64_t v = static_cast<int64_t>(indices[j]);
    if (v < 0 || v >= n) atomicMin(first_bad, static_cast<unsigned long long>(j));
  }
}
template <typename I>
__global__ void SegmentReduceKernel(SegmentGeom g, const float* data, const I* indices, const float* weights,
                                    const int64_t* offsets, bool mean, float* out) {
  HN_CUDA_KERNEL_LOOP(t, g.segments * g.inner) {
    const int64_t s = t / g.inner, q = t % g.inner, b = offsets[s], e = offsets[s + 1];
    const float scale = mean && e > b ? 1.f / static_cast<float>(e - b) : 1.f;
    float acc = 0.f;
    for (int64_t j = b; j < e; ++j) {
      const int64_t row = indices ? static_cast<int64_t>(indices[j]) : j;
      if (row < 0 || row >= g.n) continue;  // reported by the check kernel
      acc += (weights ? weights[j] : 1.f) * scale * data[row * g.inner + q];
    }
    out[t] = acc;
  }
}
template <typename I>
__global__ void SegmentReduceGradKernel(SegmentGeom g, const float* dout, const I* indices, const float* weights,
                                        const int64_t* offsets, bool mean, float* ddata) {
  HN_CUDA_KERNEL_LOOP(t, g.segments * g.inner) {
    const int64_t s = t / g.inner, q = t % g.inner, b = offsets[s], e = offsets[s + 1];
    const float scale = mean && e > b ? 1.f / static_cast<float>(e - b) : 1.f;
    for (int64_t j = b; j < e; ++j) {
      const int64_t row = indices ? static_cast<int64_t>(indices[j]) : j;
      if (row < 0 || row >= g.n) continue;
      atomicAdd(ddata + row * g.inner + q, (weights ? weights[j] : 1.f) * scale * dout[t]);
    }
  }
}
// One thread per segment: the dot products of its dOUT row with the rows it read.
template <typename I>
__global__ void SegmentWeightsGradKernel(SegmentGeom g, const float* dout, const float* data, const I* indices,
                                         const int64_t* offsets, float* dweights) {
  HN_CUDA_KERNEL_LOOP(s, g.segments) {
    for (int64_t j = offsets[s]; j < offsets[s + 1]; ++j) {
      const int64_t row = static_cast<int64_t>(indices[j]);
      float acc = 0.f;
      if (row >= 0 && row < g.n)
        for (int64_t q = 0; q < g.inner; ++q) acc += dout[s * g.inner + q] * data[row * g.inner + q];
      dweights[j] = acc;
    }
  }
}
}  // namespace

template <typename I, class Context>
void SegmentWeightsGradient(const SegmentGeom& g, const float* dout, const float* data, const I* indices,
                            const int64_t* offsets, float* dweights, Context* ctx) {
  if (g.segments == 0) return;
  SegmentWeightsGradKernel<I><<<CudaBlocks(g.segments), kCudaThreads, 0, ctx->stream()>>>(g, dout, data, indices,
                                                                                          offsets, dweights);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <typename I, class Context>
int64_t SegmentReduce(const SegmentGeom& g, const float* data, const I* indices, const float* weights,
                      const int64_t* offsets, bool mean, float* out, Context* ctx) {
  unsigned long long host = ~0ull;
  Tensor flag({1}, DataType::Int64, ctx->device());
  unsigned long long* bad = reinterpret_cast<unsigned long long*>(flag.mutable_data<int64_t>());
  if (indices && g.k > 0) {
    ctx->CopyBytes(sizeof(host), &host, Device::CPU(), bad, ctx->device());
    CheckSegmentIndicesKernel<I><<<CudaBlocks(g.k), kCudaThreads, 0, ctx->stream()>>>(g.k, g.n, indices, bad);
    HN_CUDA_CHECK(cudaGetLastError());
    ctx->CopyBytes(sizeof(host), bad, ctx->device(), &host, Device::CPU());
    HN_CUDA_CHECK(cudaStreamSynchronize(ctx->stream()));
    if (host != ~0ull) return static_cast<int64_t>(host);
  }
  if (g.segments * g.inner == 0) return -1;
  SegmentReduceKernel<I><<<CudaBlocks(g.segments * g.inner), kCudaThreads, 0, ctx->stream()>>>(
      g, data, indices, weights, offsets, mean, out);
  HN_CUDA_CHECK(cudaGetLastError());
  return -1;
}

template <typename I, class Context>
void SegmentReduceGradient(const SegmentGeom& g, const float* dout, const I* indices, const float* weights,
                           const int64_t* offsets, bool mean, float* ddata, Context* ctx) {
  if (g.n * g.inner > 0) HN_CUDA_CHECK(cudaMemsetAsync(ddata, 0, g.n * g.inner * sizeof(float), ctx->stream()));
  if (g.segments * g.inner == 0) return;
  SegmentReduceGradKernel<I><<<CudaBlocks(g.segments * g.inner), kCudaThreads, 0, ctx->stream()>>>(
      g, dout, indices, weights, offsets, mean, ddata);
  HN_CUDA_CHECK(cudaGetLastError());
}

#define HN_INSTANTIATE_SEGMENT(I)                                                                                  \
  template int64_t SegmentReduce<I, CUDAContext>(const SegmentGeom&, const float*, const I*, const float*,         \
                                                 const int64_t*, bool, float*, CUDAContext*);                      \
  template void SegmentReduceGradient<I, CUDAContext>(const SegmentGeom&, const float*, const I*, const float*,    \
                                                      const int64_t*, bool, float*, CUDAContext*);     \
  template void SegmentWeightsGradient<I, CUDAContext>(const SegmentGeom&, const float*, const float*, const I*,   \
                                                       const int64_t*, float*, CUDAContext*);
HN_INSTANTIATE_SEGMENT(int32_t)
HN_INSTANTIATE_SEGMENT(int64_t)
#undef HN_INSTANTIATE_SEGMENT

HN_REGISTER_REDUCERS(REGISTER_CUDA_OPERATOR, CUDAContext)

}  // namespace hetnet
