// CPU math: GEMM through Eigen (row-major maps, Eigen's blocked and OpenMP-parallel kernel), the rest
// as plain loops the compiler vectorizes.
#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/context.h"
#include "core/half.h"
#include "device/broadcast.h"
#include "device/cpu_thread_pool.h"
#include "device/divide.h"
#include "core/types.h"
#include "device/math.h"

namespace hetnet {
namespace math {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat>;
using Map = Eigen::Map<RowMat>;
}  // namespace

template <>
void Gemm<CPUContext>(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                      const float* B, float beta, float* C, CPUContext*) {
  if (M == 0 || N == 0) return;
  Map c(C, M, N);
  if (K == 0) {
    if (beta == 0.f) c.setZero(); else c *= beta;
    return;
  }
  if (beta == 0.f) {
    c.setZero();
  } else if (beta != 1.f) {
    c *= beta;
  }
  // A is stored M x K (or K x M when transposed), B is K x N (or N x K).
  ConstMap a(A, trans_a ? K : M, trans_a ? M : K);
  ConstMap b(B, trans_b ? N : K, trans_b ? K : N);
  // One row against an N x K matrix (FC at batch 1): Eigen runs a matrix-vector product on one
  // thread, bound by one core's memory bandwidth; split the N rows of B over the team instead
  // (chunks of 64 rows keep Eigen's row blocking, so each output is summed as before).
  if (M == 1 && trans_b && !trans_a && N >= 128 && static_cast<double>(N) * K >= (1 << 18) && CpuWorkers() > 1) {
    constexpr int64_t kRows = 64;
    const int64_t chunks = (N + kRows - 1) / kRows;
    ParallelFor(chunks, static_cast<int>(std::min<int64_t>(CpuWorkers(), chunks)), [&](int64_t i, int) {
      const int64_t n0 = i * kRows, len = std::min(kRows, N - n0);
      c.middleCols(n0, len).noalias() += alpha * a * b.middleRows(n0, len).transpose();
    });
    return;
  }
  if (!trans_a && !trans_b) c.noalias() += alpha * a * b;
  else if (!trans_a && trans_b) c.noalias() += alpha * a * b.transpose();
  else if (trans_a && !trans_b) c.noalias() += alpha * a.transpose() * b;
  else c.noalias() += alpha * a.transpose() * b.transpose();
}

template <typename T, class Context>
void Set(int64_t n, T value, T* y, Context*) {
  for (int64_t i = 0; i < n; ++i) y[i] = value;
}
#define HN_INSTANTIATE_SET(T, _) template void Set<T, CPUContext>(int64_t, T, T*, CPUContext*);
HN_FOR_EACH_POD_TYPE(HN_INSTANTIATE_SET)
#undef HN_INSTANTIATE_SET

template <>
void Scale<CPUContext>(int64_t n, float alpha, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i];
}

template <>
void Axpy<CPUContext>(int64_t n, float alpha, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

namespace {
template <typename T, typename F>
void BroadcastLoop(int64_t pre, int64_t n, int64_t post, const T* a, const T* b, T* c, F f) {
  if (post == 1) {
    for (int64_t p = 0; p < pre; ++p) {
      const T* ap = a + p * n;
      T* cp = c + p * n;
      for (int64_t j = 0; j < n; ++j) cp[j] = f(ap[j], b[j]);
    }
    return;
  }
  for (int64_t p = 0; p < pre; ++p)
    for (int64_t j = 0; j < n; ++j) {
      const T bj = b[j];
      const int64_t off = (p * n + j) * post;
      for (int64_t q = 0; q < post; ++q) c[off + q] = f(a[off + q], bj);
    }
}
}  // namespace

namespace {
// c[j] = op(a[j], b[j]) for float with non-temporal stores: for an output larger than the caches
// they skip reading each line of c before writing it (a third of an Add's memory traffic). Returns
// false where this build has no such stores (the caller's loop runs instead). Ends with a store
// fence: the pool's hand-back to the caller must not overtake the streamed lines.
template <BinaryOp kOp>
bool StreamBinary(int64_t n, const float* a, const float* b, float* c) {
#if defined(__AVX512F__)
  int64_t j = 0;
  for (; j < n && (reinterpret_cast<uintptr_t>(c + j) & 63) != 0; ++j) c[j] = ApplyBinary<kOp, float>(a[j], b[j]);
  for (; j + 16 <= n; j += 16) {
    const __m512 x = _mm512_loadu_ps(a + j), y = _mm512_loadu_ps(b + j);
    const __m512 r = kOp == BinaryOp::Add   ? _mm512_add_ps(x, y)
                     : kOp == BinaryOp::Sub ? _mm512_sub_ps(x, y)
                     : kOp == BinaryOp::Mul ? _mm512_mul_ps(x, y)
                                            : _mm512_div_ps(x, y);
    _mm512_stream_ps(c + j, r);
  }
  for (; j < n; ++j) c[j] = ApplyBinary<kOp, float>(a[j], b[j]);
  _mm_sfence();
  return true;
#else
  (void)n, (void)a, (void)b, (void)c;
  return false;
#endif
}

bool StreamBinaryOp(BinaryOp op, int64_t n, const float* a, const float* b, float* c) {
  switch (op) {
    case BinaryOp::Add: return StreamBinary<BinaryOp::Add>(n, a, b, c);
    case BinaryOp::Sub: return StreamBinary<BinaryOp::Sub>(n, a, b, c);
    case BinaryOp::Mul: return StreamBinary<BinaryOp::Mul>(n, a, b, c);
    case BinaryOp::Div: return StreamBinary<BinaryOp::Div>(n, a, b, c);
  }
  return false;
}
}  // namespace

// Elements as numpy broadcasting computes them (ApplyBinary: integers wrap, as NumPy's do).
template <typename T>
void BroadcastSerial(BinaryOp op, int64_t pre, int64_t n, int64_t post, const T* a, const T* b, T* c,
                     bool stream = false) {
  if constexpr (std::is_same_v<T, float>)
    if (stream && pre == 1 && post == 1 && StreamBinaryOp(op, n, a, b, c)) return;
  switch (op) {
    case BinaryOp::Add: BroadcastLoop(pre, n, post, a, b, c, ApplyBinary<BinaryOp::Add, T>); break;
    case BinaryOp::Sub: BroadcastLoop(pre, n, post, a, b, c, ApplyBinary<BinaryOp::Sub, T>); break;
    case BinaryOp::Mul: BroadcastLoop(pre, n, post, a, b, c, ApplyBinary<BinaryOp::Mul, T>); break;
    case BinaryOp::Div: BroadcastLoop(pre, n, post, a, b, c, ApplyBinary<BinaryOp::Div, T>); break;
  }
}

// Large ones (over 256K elements: below that waking a thread costs more than it saves) in chunks
// over the intra-op pool: by ranges of pre's rows, or with few rows, by ranges of b's n elements
// (a 16M-float Add of [1, 16M] and [16M] is one row).
template <typename T, class Context>
void BroadcastBinary(BinaryOp op, int64_t pre, int64_t n, int64_t post, const T* a, const T* b, T* c, Context*) {
  constexpr int64_t kMinParallel = 1 << 18, kChunk = 1 << 16;
  // Outputs over 16 MiB (past this host's caches) are streamed where a chunk is one dense range.
  constexpr int64_t kMinStreamBytes = int64_t{16} << 20;
  const int64_t total = pre * n * post;
  const bool stream = total * static_cast<int64_t>(sizeof(T)) >= kMinStreamBytes;
  const int workers = CpuWorkers();
  if (workers <= 1 || total < kMinParallel) return BroadcastSerial(op, pre, n, post, a, b, c, stream);
  const int64_t row = n * post;
  if (pre >= 4 * workers) {
    const int64_t rows = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, row)), parts = (pre + rows - 1) / rows;
    ParallelFor(parts, workers, [&](int64_t i, int) {
      const int64_t p0 = i * rows, p1 = std::min(pre, p0 + rows);
      BroadcastSerial(op, p1 - p0, n, post, a + p0 * row, b, c + p0 * row);
    });
    return;
  }
  const int64_t span = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, post)), per_row = (n + span - 1) / span;
  ParallelFor(pre * per_row, workers, [&](int64_t i, int) {
    const int64_t p = i / per_row, j0 = (i % per_row) * span, j1 = std::min(n, j0 + span);
    const int64_t off = p * row + j0 * post;
    BroadcastSerial(op, int64_t{1}, j1 - j0, post, a + off, b + j0, c + off, stream);
  });
}
#define HN_INSTANTIATE_BINARY(T) \
  template void BroadcastBinary<T, CPUContext>(BinaryOp, int64_t, int64_t, int64_t, const T*, const T*, T*, CPUContext*);
HN_FOR_EACH_BINARY_MATH_TYPE(HN_INSTANTIATE_BINARY)
HN_INSTANTIATE_BINARY(uint32_t)  // CPU only (ONNX's unsigned types)
HN_INSTANTIATE_BINARY(uint64_t)
#undef HN_INSTANTIATE_BINARY

template <>
void ReduceSumPreMidPost<CPUContext>(int64_t pre, int64_t n, int64_t post, const float* x, float* y, CPUContext*) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.f;
  if (post == 1) {  // rows of n added up (vectorizes; the general loop below sums runs of post)
    for (int64_t p = 0; p < pre; ++p)
      for (int64_t j = 0; j < n; ++j) y[j] += x[p * n + j];
    return;
  }
  for (int64_t p = 0; p < pre; ++p)
    for (int64_t j = 0; j < n; ++j) {
      const float* xp = x + (p * n + j) * post;
      float s = 0.f;
      for (int64_t q = 0; q < post; ++q) s += xp[q];
      y[j] += s;
    }
}

// im2col row by row: for kernel offset (c, i, j) and output row y the valid x form one range
// [x0, x1) (a strided copy, a plain copy for stride 1); the rest is zero.
namespace {
inline void ValidRange(int64_t n_out, int64_t n_in, int stride, int64_t offset, int64_t* lo, int64_t* hi) {
  // x with 0 <= x * stride + offset < n_in
  int64_t a = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t b = n_in - offset <= 0 ? 0 : (n_in - offset + stride - 1) / stride;
  *lo = std::min<int64_t>(a, n_out);
  *hi = std::max<int64_t>(*lo, std::min<int64_t>(b, n_out));
}
}  // namespace

template <>
void Im2Col<CPUContext>(const Im2ColGeom& g, const float* im, float* col, CPUContext*) {
  const int64_t rows = g.C * g.kh * g.kw, ohw = g.OH * g.OW;
  // Rows are independent: split them over the threads unless the caller already runs in parallel
  // (a batch spreads its images over the threads). For one image this took ResNet-50's conv1 from
  // 77% to 88% of its GEMM ceiling on 2 cores (im2col 0.59 -> 0.35 ms; bench_conv, A/B x3).
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && rows * ohw >= (1 << 18))
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r / (g.kh * g.kw);
    const int i = static_cast<int>((r / g.kw) % g.kh), j = static_cast<int>(r % g.kw);
    const float* src = im + c * g.H * g.W;
    float* dst = col + r * ohw;
    int64_t x0, x1, y0, y1;
    ValidRange(g.OW, g.W, g.sw, static_cast<int64_t>(j) * g.dw - g.pl, &x0, &x1);
    ValidRange(g.OH, g.H, g.sh, static_cast<int64_t>(i) * g.dh - g.pt, &y0, &y1);
    std::fill(dst, dst + y0 * g.OW, 0.f);
    for (int64_t y = y0; y < y1; ++y) {
      float* d = dst + y * g.OW;
      const float* s = src + (y * g.sh - g.pt + static_cast<int64_t>(i) * g.dh) * g.W - g.pl + static_cast<int64_t>(j) * g.dw;
      std::fill(d, d + x0, 0.f);
      if (g.sw == 1) {
        std::copy(s + x0, s + x1, d + x0);
      } else {
        for (int64_t x = x0; x < x1; ++x) d[x] = s[x * g.sw];
      }
      std::fill(d + x1, d + g.OW, 0.f);
    }
    std::fill(dst + y1 * g.OW, dst + ohw, 0.f);
  }
}

template <>
void Col2Im<CPUContext>(const Im2ColGeom& g, const float* col, float* im, CPUContext*) {
  const int64_t ohw = g.OH * g.OW, k = static_cast<int64_t>(g.kh) * g.kw;
  for (int64_t c = 0; c < g.C; ++c) {
    float* dst = im + c * g.H * g.W;
    std::fill(dst, dst + g.H * g.W, 0.f);
    for (int64_t q = 0; q < k; ++q) {
      const int i = static_cast<int>(q / g.kw), j = static_cast<int>(q % g.kw);
      const float* src = col + (c * k + q) * ohw;
      int64_t x0, x1, y0, y1;
      ValidRange(g.OW, g.W, g.sw, static_cast<int64_t>(j) * g.dw - g.pl, &x0, &x1);
      ValidRange(g.OH, g.H, g.sh, static_cast<int64_t>(i) * g.dh - g.pt, &y0, &y1);
      for (int64_t y = y0; y < y1; ++y) {
        float* d = dst + (y * g.sh - g.pt + static_cast<int64_t>(i) * g.dh) * g.W - g.pl + static_cast<int64_t>(j) * g.dw;
        const float* s = src + y * g.OW;
        for (int64_t x = x0; x < x1; ++x) d[x * g.sw] += s[x];
      }
    }
  }
}

int CpuWorkers() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void ParallelFor(int64_t n, int workers, const std::function<void(int64_t, int)>& f) {
  cpu_pool::Run(n, workers, f);
}

template <>
void RandUniform<CPUContext>(int64_t n, float a, float b, float* y, std::mt19937& gen, CPUContext*) {
  std::uniform_real_distribution<float> dist(a, b);
  for (int64_t i = 0; i < n; ++i) y[i] = dist(gen);
}

template <>
void RandGaussian<CPUContext>(int64_t n, float mean, float stddev, float* y, std::mt19937& gen, CPUContext*) {
  std::normal_distribution<float> dist(mean, stddev);
  for (int64_t i = 0; i < n; ++i) y[i] = dist(gen);
}

}  // namespace math
}  // namespace hetnet
