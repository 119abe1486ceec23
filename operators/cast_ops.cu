#include <cuda_fp16.h>

#include <type_traits>

#include "device/cuda/cuda_context.h"
#include "operators/cast_ops.h"

namespace hetnet {

namespace {
constexpr float kHalfMax = 65504.f;

__device__ float ToFloat(Half h) { return __half2float(__ushort_as_half(h.bits)); }
__device__ Half ToHalf(float f) {
  Half h;
  h.bits = __half_as_ushort(__float2half_rn(f));
  return h;
}

template <typename D> struct Conv {
  template <typename S> __device__ static D From(S v) { return CastNumber<D>(v); }
  __device__ static D From(Half v) { return CastNumber<D>(ToFloat(v)); }
};
template <> struct Conv<bool> {
  template <typename S> __device__ static bool From(S v) { return v != S(0); }
  __device__ static bool From(Half v) { return ToFloat(v) != 0.f; }
};
template <> struct Conv<Half> {
  template <typename S> __device__ static Half From(S v) { return ToHalf(static_cast<float>(v)); }
  __device__ static Half From(Half v) { return v; }
};

template <typename S, typename D>
__global__ void CastCUDA(int64_t n, const S* x, D* y, bool clip_half) {
  HN_CUDA_KERNEL_LOOP(i, n) {
    if constexpr (std::is_same<D, Half>::value && !std::is_same<S, Half>::value) {
      if (clip_half) {
        const float v = static_cast<float>(x[i]);
        y[i] = ToHalf(v > kHalfMax ? kHalfMax : (v < -kHalfMax ? -kHalfMax : v));
        continue;
      }
    }
    y[i] = Conv<D>::From(x[i]);
  }
}
}  // namespace

template <>
void CastKernel<CUDAContext>(DataType from, DataType to, int64_t n, const void* x, void* y, bool clip_half,
                             CUDAContext* ctx) {
  if (n == 0) return;
  DispatchCastTypes(from, to, [&](auto s, auto d) {
    using S = decltype(s);
    using D = decltype(d);
    CastCUDA<S, D><<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, static_cast<const S*>(x),
                                                                      static_cast<D*>(y), clip_half);
    HN_CUDA_CHECK(cudaGetLastError());
  });
}

REGISTER_CUDA_OPERATOR(Cast, CastOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(FloatToHalf, FloatToHalfOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(HalfToFloat, HalfToFloatOp<CUDAContext>);

}  // namespace hetnet
