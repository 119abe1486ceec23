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

// bfloat16 is the upper half of a float32; to it, round to nearest even (a NaN stays NaN), as the
// host's FloatToBFloat16.
__device__ float ToFloat(BFloat16 b) { return __uint_as_float(static_cast<uint32_t>(b.bits) << 16); }
__device__ BFloat16 ToBFloat16(float f) {
  uint32_t x = __float_as_uint(f);
  BFloat16 b;
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    b.bits = static_cast<uint16_t>((x >> 16) | 0x0040u);
    return b;
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  b.bits = static_cast<uint16_t>(x >> 16);
  return b;
}
template <typename S>
__device__ float AsFloat(S v) {
  if constexpr (std::is_same<S, Half>::value || std::is_same<S, BFloat16>::value) return ToFloat(v);
  else return static_cast<float>(v);
}

// float16 and bfloat16 convert through float32, as on the CPU (operators/cast_ops.cc).
template <typename D, typename S>
__device__ D ConvertOne(S v) {
  if constexpr (std::is_same<D, S>::value) return v;
  else if constexpr (std::is_same<S, Half>::value || std::is_same<S, BFloat16>::value) return ConvertOne<D>(ToFloat(v));
  else if constexpr (std::is_same<D, bool>::value) return v != S(0);
  else if constexpr (std::is_same<D, Half>::value) return ToHalf(static_cast<float>(v));
  else if constexpr (std::is_same<D, BFloat16>::value) return ToBFloat16(static_cast<float>(v));
  else return CastNumber<D>(v);
}

template <typename S, typename D>
__global__ void CastCUDA(int64_t n, const S* x, D* y, bool clip_half) {
  HN_CUDA_KERNEL_LOOP(i, n) {
    if constexpr (std::is_same<D, Half>::value && !std::is_same<S, Half>::value) {
      if (clip_half) {
        const float v = AsFloat(x[i]);
        y[i] = ToHalf(v > kHalfMax ? kHalfMax : (v < -kHalfMax ? -kHalfMax : v));
        continue;
      }
    }
    y[i] = ConvertOne<D>(x[i]);
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
