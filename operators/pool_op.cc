// MaxPool / AveragePool on CPU: schemas, gradient makers, and CPU loops over pool_op.h's
// per-element math.
#include "operators/pool_op.h"

#include <algorithm>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#include <limits>
#include <vector>

#include "core/gradient.h"
#include "core/op_cost.h"
#include "core/reduced_precision.h"
#include "device/math.h"

namespace hetnet {

namespace {
// AveragePool: PoolForwardAt's arithmetic in the same order (so the same bits), by plane and output row: the
// window's rows and the input plane are found once per row instead of dividing per element, and
// planes run on the OpenMP team when there is enough work (issue 16: a per-element loop with
// divisions ran LeNet's pools 5-10x slower than ONNX Runtime).
template <bool kMax>
void PoolPlane(const PoolParams& p, const float* xp, float* yp) {
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    int64_t t, b, l, r;
    PoolWindow(p, oh, 0, &t, &b, &l, &r);
    float* yr = yp + oh * p.OW;
    for (int64_t ow = 0; ow < p.OW; ++ow) {
      const int64_t ws = ow * p.sw - p.pl;
      l = ws > 0 ? ws : 0;
      r = ws + p.kw < p.W ? ws + p.kw : p.W;
      float acc = kMax ? -std::numeric_limits<float>::max() : 0.f;
      for (int64_t h = t; h < b; ++h) {
        const float* xr = xp + h * p.W;
        for (int64_t w = l; w < r; ++w) {
          const float v = xr[w];
          if (kMax) acc = v > acc ? v : acc;
          else acc += v;
        }
      }
      yr[ow] = kMax ? acc : acc * PoolAverageScale(p, t, b, l, r);
    }
  }
}

// The output columns [*lo, *hi) whose windows (kw wide, stride sw) lie wholly inside a row.
inline void FullWindowColumns(const PoolParams& p, int kw, int sw, int64_t* lo, int64_t* hi) {
  *lo = std::min<int64_t>(p.OW, (p.pl + sw - 1) / sw);
  *hi = std::max<int64_t>(*lo, std::min<int64_t>(p.OW, p.W - kw + p.pl >= 0 ? (p.W - kw + p.pl) / sw + 1 : 0));
}

// MaxPool by output row in two steps, each a loop the compiler vectorizes: the window rows' maxima
// per input column (contiguous), then each window's maximum over those (the common kernel widths
// and strides compiled as constants, so strided reads become shuffles). `v > acc ? v : acc` as
// PoolForwardAt, so NaN is skipped the same way and every result has the same bits. ResNet's
// 3x3/s2 pool: 1.39 -> see RESULTS.md.
template <int KW, int SW>
void MaxOverColumns(const PoolParams& p, const float* v, float* yr) {
  const int kw = KW ? KW : p.kw, sw = SW ? SW : p.sw;
  int64_t lo, hi;  // outputs whose window lies inside the row
  FullWindowColumns(p, kw, sw, &lo, &hi);
  auto edge = [&](int64_t ow) {
    int64_t t, b, l, r;
    PoolWindow(p, 0, ow, &t, &b, &l, &r);
    float acc = -std::numeric_limits<float>::max();
    for (int64_t w = l; w < r; ++w) acc = v[w] > acc ? v[w] : acc;
    yr[ow] = acc;
  };
  for (int64_t ow = 0; ow < lo; ++ow) edge(ow);
  const float* base = v - p.pl;
  for (int64_t ow = lo; ow < hi; ++ow) {
    const float* win = base + ow * sw;
    float acc = win[0];
    for (int j = 1; j < kw; ++j) acc = win[j] > acc ? win[j] : acc;
    yr[ow] = acc;
  }
  for (int64_t ow = hi; ow < p.OW; ++ow) edge(ow);
}

void MaxPlane(const PoolParams& p, const float* xp, float* yp) {
  thread_local std::vector<float> column_max;
  column_max.resize(static_cast<size_t>(p.W));
  float* v = column_max.data();
  auto columns = p.kw == 3 && p.sw == 2   ? &MaxOverColumns<3, 2>
                 : p.kw == 2 && p.sw == 2 ? &MaxOverColumns<2, 2>
                 : p.kw == 3 && p.sw == 1 ? &MaxOverColumns<3, 1>
                                          : &MaxOverColumns<0, 0>;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    int64_t t, b, l, r;
    PoolWindow(p, oh, 0, &t, &b, &l, &r);
    float* yr = yp + oh * p.OW;
    if (t >= b) {  // a window of padding only (possible with large pads): what PoolPlane gives
      std::fill(yr, yr + p.OW, -std::numeric_limits<float>::max());
      continue;
    }
    std::fill(v, v + p.W, -std::numeric_limits<float>::max());
    for (int64_t h = t; h < b; ++h) {
      const float* xr = xp + h * p.W;
      for (int64_t w = 0; w < p.W; ++w) v[w] = xr[w] > v[w] ? xr[w] : v[w];
    }
    columns(p, v, yr);
  }
}

// order NHWC: each output pixel folds its window's pixels, a contiguous run of C channels each (the
// loop over channels vectorizes); the window's pixels in PoolForwardAt's order, so the same bits as
// the NCHW kernels. Output rows (n, oh) spread over the intra-op pool.
// T = BFloat16 (reduced-precision inference): the same float32 arithmetic on widened values, each
// output rounded once (a maximum is exact).
inline float Widen(float v) { return v; }
inline float Widen(BFloat16 v) { return BFloat16ToFloat(v); }
#if defined(__AVX512F__)
// One output pixel of PoolForwardChannelsLast in float32, 16 channels per register: the window's
// accumulator stays in a register instead of going through y (which the compiler must assume
// aliases x): LeNet's first MaxPool 4.4 -> 2.3 us (benchmarks/RESULTS.md). The same arithmetic in
// the same order per channel: _mm512_max_ps(v, acc) is `v > acc ? v : acc` (NaN and equal values
// keep acc).
template <bool kMax>
void WindowChannelsAvx512(const PoolParams& p, const float* xn, int64_t t, int64_t b, int64_t l, int64_t r, float* y) {
  const __m512 scale = _mm512_set1_ps(kMax ? 1.f : PoolAverageScale(p, t, b, l, r));
  for (int64_t c0 = 0; c0 < p.C; c0 += 16) {
    const __mmask16 m = p.C - c0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (p.C - c0)) - 1);
    __m512 acc = kMax ? _mm512_set1_ps(-std::numeric_limits<float>::max()) : _mm512_setzero_ps();
    for (int64_t h = t; h < b; ++h)
      for (int64_t w = l; w < r; ++w) {
        const __m512 v = _mm512_maskz_loadu_ps(m, xn + (h * p.W + w) * p.C + c0);
        acc = kMax ? _mm512_max_ps(v, acc) : _mm512_add_ps(acc, v);
      }
    _mm512_mask_storeu_ps(y + c0, m, kMax ? acc : _mm512_mul_ps(acc, scale));
  }
}
#endif

// One output pixel of exactly kC channels (blocked activations: 8 or 16 per "image", pool_op.h's
// MakePoolParams): the accumulators stay in AVX registers (a local array without AVX). The loop
// below accumulates through y, which may alias x, so every step went to memory: ResNet-18's
// MaxPool on nChw8c blocks took 0.8 ms instead of 0.2-0.3. The same arithmetic in the same order.
template <bool kMax, int kC>
void WindowFixedChannels(const PoolParams& p, const float* xn, int64_t t, int64_t b, int64_t l, int64_t r, float* y) {
#if defined(__AVX__)
  // _mm256_max_ps(v, acc) is `v > acc ? v : acc`, as in WindowChannelsAvx512.
  const __m256 scale = _mm256_set1_ps(kMax ? 1.f : PoolAverageScale(p, t, b, l, r));
  for (int c0 = 0; c0 < kC; c0 += 8) {
    __m256 acc = kMax ? _mm256_set1_ps(-std::numeric_limits<float>::max()) : _mm256_setzero_ps();
    for (int64_t h = t; h < b; ++h)
      for (int64_t w = l; w < r; ++w) {
        const __m256 v = _mm256_loadu_ps(xn + (h * p.W + w) * kC + c0);
        acc = kMax ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
      }
    _mm256_storeu_ps(y + c0, kMax ? acc : _mm256_mul_ps(acc, scale));
  }
#else
  float acc[kC];
  for (float& a : acc) a = kMax ? -std::numeric_limits<float>::max() : 0.f;
  for (int64_t h = t; h < b; ++h)
    for (int64_t w = l; w < r; ++w) {
      const float* xp = xn + (h * p.W + w) * kC;
      for (int c = 0; c < kC; ++c) acc[c] = kMax ? (xp[c] > acc[c] ? xp[c] : acc[c]) : acc[c] + xp[c];
    }
  const float scale = kMax ? 1.f : PoolAverageScale(p, t, b, l, r);
  for (int c = 0; c < kC; ++c) y[c] = kMax ? acc[c] : acc[c] * scale;
#endif
}

#if defined(__AVX2__)
// Output pixels [lo, hi) of one row whose KH x KW windows lie wholly inside the image (t: the
// windows' first input row), channels-last: kC channels (8 or 16: blocked activations) or, kC = 0,
// p.C of them (the last 1-7 through masked loads and stores). The window is unrolled at constant
// offsets, where WindowFixedChannels and the generic loop iterate over runtime bounds.
// ResNet-18's MaxPool (3x3, stride 2, 64 x 112 x 112 in nChw8c), alone, one thread, the two
// alternated per run: 0.229 ms best and 0.464 median with the loop, 0.071 and 0.106 unrolled
// (ONNX Runtime's took 0.23-0.25 in the net; benchmarks/RESULTS.md, twentieth session).
// The same arithmetic in the same order per channel as those loops, so the same bits.
template <bool kMax, int kC, int KH, int KW>
void FullWindowsChannelsLast(const PoolParams& p, const float* xn, int64_t t, int64_t lo, int64_t hi, float* y) {
  const int64_t C = kC ? kC : p.C, row = p.W * C, step = p.sw * C;
  const float* x = xn + (t * p.W + lo * p.sw - p.pl) * C;
  const __m256 scale = _mm256_set1_ps(kMax ? 1.f : PoolAverageScale(p, t, t + KH, 0, KW));
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(C % 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int64_t ow = lo; ow < hi; ++ow, x += step, y += C) {
#pragma GCC unroll 2
    for (int64_t c0 = 0; c0 < C; c0 += 8) {
      const bool full = kC || c0 + 8 <= C;
      __m256 acc = kMax ? _mm256_set1_ps(-std::numeric_limits<float>::max()) : _mm256_setzero_ps();
#pragma GCC unroll 3
      for (int h = 0; h < KH; ++h)
#pragma GCC unroll 3
        for (int w = 0; w < KW; ++w) {
          const float* at = x + h * row + w * C + c0;
          const __m256 v = full ? _mm256_loadu_ps(at) : _mm256_maskload_ps(at, tail);
          acc = kMax ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
        }
      const __m256 out = kMax ? acc : _mm256_mul_ps(acc, scale);
      if (full) _mm256_storeu_ps(y + c0, out);
      else _mm256_maskstore_ps(y + c0, tail, out);
    }
  }
}

// The full-window kernel for this pool's window (3x3 or 2x2) and channels, or null. With AVX-512,
// other channel counts keep WindowChannelsAvx512 (16 per register; not measured against this).
template <bool kMax>
auto FullWindowsKernel(const PoolParams& p) -> void (*)(const PoolParams&, const float*, int64_t, int64_t, int64_t,
                                                         float*) {
#if defined(__AVX512F__)
  if (p.C != 8 && p.C != 16) return nullptr;
#endif
  if (p.kh == 3 && p.kw == 3)
    return p.C == 8 ? &FullWindowsChannelsLast<kMax, 8, 3, 3> : p.C == 16 ? &FullWindowsChannelsLast<kMax, 16, 3, 3>
                                                                          : &FullWindowsChannelsLast<kMax, 0, 3, 3>;
  if (p.kh == 2 && p.kw == 2)
    return p.C == 8 ? &FullWindowsChannelsLast<kMax, 8, 2, 2> : p.C == 16 ? &FullWindowsChannelsLast<kMax, 16, 2, 2>
                                                                          : &FullWindowsChannelsLast<kMax, 0, 2, 2>;
  return nullptr;
}
#endif

template <bool kMax, typename T>
void PoolForwardChannelsLast(const PoolParams& p, const T* x, T* y) {
  constexpr bool kFloat = std::is_same<T, float>::value;
  const int64_t C = p.C, rows = p.N * p.OH;
  const double work = static_cast<double>(rows) * p.OW * C * p.kh * p.kw;
  const int workers = work < 32768 ? 1 : static_cast<int>(std::min<int64_t>(math::CpuWorkers(), rows));
  std::vector<std::vector<float>> narrow_acc(kFloat ? 0 : workers);  // bfloat16: a float32 row per pool slot
  for (auto& a : narrow_acc) a.resize(C);
#if defined(__AVX2__)
  const auto full_windows = kFloat ? FullWindowsKernel<kMax>(p) : nullptr;
#endif
  math::ParallelFor(rows, workers, [&](int64_t row, int slot) {
    const int64_t n = row / p.OH, oh = row % p.OH;
    const T* xn = x + n * p.H * p.W * C;
    int64_t skip_lo = p.OW, skip_hi = p.OW;  // output pixels a full-window kernel did
#if defined(__AVX2__)
    if constexpr (kFloat) {
      int64_t t, b, l, r;
      PoolWindow(p, oh, 0, &t, &b, &l, &r);
      if (full_windows && b - t == p.kh) {
        FullWindowColumns(p, p.kw, p.sw, &skip_lo, &skip_hi);
        full_windows(p, xn, t, skip_lo, skip_hi, y + ((n * p.OH + oh) * p.OW + skip_lo) * C);
      }
    }
#endif
    for (int64_t ow = 0; ow < p.OW; ++ow) {
      if (ow == skip_lo) ow = skip_hi;
      if (ow >= p.OW) break;
      int64_t t, b, l, r;
      PoolWindow(p, oh, ow, &t, &b, &l, &r);
      T* yt = y + ((n * p.OH + oh) * p.OW + ow) * C;
      if constexpr (kFloat) {
        if (C == 8 || C == 16) {
          if (C == 8) WindowFixedChannels<kMax, 8>(p, xn, t, b, l, r, yt);
          else WindowFixedChannels<kMax, 16>(p, xn, t, b, l, r, yt);
          continue;
        }
      }
#if defined(__AVX512F__)
      if constexpr (kFloat) {
        WindowChannelsAvx512<kMax>(p, xn, t, b, l, r, yt);
        continue;
      }
#endif
      float* yp = kFloat ? reinterpret_cast<float*>(yt) : narrow_acc[slot].data();
      std::fill(yp, yp + C, kMax ? -std::numeric_limits<float>::max() : 0.f);
      for (int64_t h = t; h < b; ++h)
        for (int64_t w = l; w < r; ++w) {
          const T* xp = xn + (h * p.W + w) * C;
          for (int64_t c = 0; c < C; ++c) {
            const float v = Widen(xp[c]);
            if (kMax) yp[c] = v > yp[c] ? v : yp[c];
            else yp[c] += v;
          }
        }
      if (!kMax) {
        const float scale = PoolAverageScale(p, t, b, l, r);
        for (int64_t c = 0; c < C; ++c) yp[c] *= scale;
      }
      if constexpr (!kFloat)
        for (int64_t c = 0; c < C; ++c) yt[c] = FloatToBFloat16(yp[c]);
    }
  });
}

template <bool kMax>
void PoolForwardCpu(const PoolParams& p, const float* x, float* y) {
  if (p.channels_last) return PoolForwardChannelsLast<kMax>(p, x, y);
  const int64_t planes = p.N * p.C, in_plane = p.H * p.W, out_plane = p.OH * p.OW;
  const double work = static_cast<double>(planes) * out_plane * p.kh * p.kw;
  const int workers = work < 32768 ? 1 : static_cast<int>(std::min<int64_t>(math::CpuWorkers(), planes));
  auto plane = [&](int64_t i, int) {
    if (kMax) MaxPlane(p, x + i * in_plane, y + i * out_plane);
    else PoolPlane<kMax>(p, x + i * in_plane, y + i * out_plane);
  };
  if (workers <= 1) {
    for (int64_t i = 0; i < planes; ++i) plane(i, 0);
    return;
  }
  math::ParallelFor(planes, workers, plane);
}
}  // namespace

template <>
void PoolForward<CPUContext, true>(const PoolParams& p, const float* x, float* y, CPUContext*) {
  PoolForwardCpu<true>(p, x, y);
}
template <>
void PoolForward<CPUContext, false>(const PoolParams& p, const float* x, float* y, CPUContext*) {
  PoolForwardCpu<false>(p, x, y);
}
template <>
void PoolBackward<CPUContext, true>(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx,
                                    CPUContext*) {
  const int64_t n = p.N * p.C * p.H * p.W;
  for (int64_t i = 0; i < n; ++i) dx[i] = PoolBackwardAt<true>(p, i, x, y, dy);
}
template <>
void PoolBackward<CPUContext, false>(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx,
                                     CPUContext*) {
  const int64_t n = p.N * p.C * p.H * p.W;
  for (int64_t i = 0; i < n; ++i) dx[i] = PoolBackwardAt<false>(p, i, x, y, dy);
}

namespace {
std::vector<TensorInfo> PoolShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  if (!in[0].known) return {TensorInfo::Unknown()};
  const ConvPoolGeom g = ComputeConvPoolGeom(def, ConvPoolKind::Pool, ParsePoolArgs(def, true, true), in[0].dims);
  return {TensorInfo::Of(g.y_shape(), in[0].dtype)};
}
const char* kPoolDoc =
    "NCHW pooling; args kernel(s), stride(s), pad(s), global_pooling, legacy_pad (CAFFE_LEGACY_POOLING = "
    "Caffe's ceil mode). Windows are clipped to the input; AveragePool divides by the clipped window "
    "(count_include_pad=1: by kernel_h * kernel_w).";
}  // namespace

OPERATOR_SCHEMA(MaxPool).NumInputs(1).NumOutputs(1).TensorInference(PoolShape).SetDoc(kPoolDoc);
OPERATOR_SCHEMA(AveragePool).NumInputs(1).NumOutputs(1).TensorInference(PoolShape).SetDoc(kPoolDoc);
OPERATOR_SCHEMA(MaxPoolGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);
OPERATOR_SCHEMA(AveragePoolGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

namespace {
// One compare / add per window element of every output; bandwidth-bound.
OpCost PoolCost(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out) {
  const ConvPoolGeom g = ComputeConvPoolGeom(def, ConvPoolKind::Pool, ParsePoolArgs(def, true, true), in[0].dims);
  return MemoryCost(in, out, static_cast<double>(g.kh) * g.kw);
}
}  // namespace
REGISTER_OP_COST(MaxPool, PoolCost);
REGISTER_OP_COST(AveragePool, PoolCost);

void PoolForwardBf16Cpu(bool max, const PoolParams& p, const BFloat16* x, BFloat16* y) {
  if (max) PoolForwardChannelsLast<true>(p, x, y);
  else PoolForwardChannelsLast<false>(p, x, y);
}

// Reduced-precision inference (core/reduced_precision.h): bfloat16 pools where their input is
// bfloat16 already, channels-last (the only layout with a bfloat16 kernel).
const ReducedPrecisionKernel kBf16Pool{{DataType::BFloat16}, 1, /*follower=*/true,
                                       [](const caffe2::OperatorDef& op, DataType) {
                                         return ArgumentHelper(op).GetSingleArgument<std::string>("order", "NCHW") == "NHWC";
                                       }};
REGISTER_REDUCED_PRECISION_KERNEL(MaxPool, CPU, "", kBf16Pool);
REGISTER_REDUCED_PRECISION_KERNEL(AveragePool, CPU, "", kBf16Pool);

REGISTER_CPU_OPERATOR(MaxPool, PoolOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(AveragePool, PoolOp<CPUContext, false>);
REGISTER_CPU_OPERATOR(MaxPoolGradient, PoolGradientOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(AveragePoolGradient, PoolGradientOp<CPUContext, false>);

class GetPoolGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp(Def().type() + "Gradient", {I(0), O(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(MaxPool, GetPoolGradient);
REGISTER_GRADIENT(AveragePool, GetPoolGradient);

}  // namespace hetnet
