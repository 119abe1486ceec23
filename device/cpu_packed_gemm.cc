#include "device/cpu_packed_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <new>
#include <utility>

#include "core/checked_size.h"
#include "device/math.h"

namespace hetnet {
namespace cpu_gemm {
namespace {

constexpr int kTileRows = 12;     // rows of one register tile: 12 x 2 accumulators + 2 B + 1 A broadcast
constexpr int64_t kGroupRows = 48;  // rows of one parallel task (4 tiles reuse the panel's block from L1/L2)
// K is cut into blocks of at most this many, so that a 12-row block of A (12 x 832 floats, 39 KiB)
// stays in the 48 KiB L1 while the panel's block streams from L2; shorter K runs in one block (no
// partial sums through C). K = 784 in one block measured 3-5% faster than in two of 392.
constexpr int64_t kMaxKBlock = 832;
// Calls below this many multiply-adds stay on the calling thread (a pool hand-off costs ~ microseconds).
constexpr double kMinParallelMacs = 1 << 19;
constexpr int64_t kMinParallelGemvFloats = 1 << 18;  // of B, for one row (1 MiB)

struct TileArgs {
  const float* a;  // first row of A, at the block's first k
  int64_t lda;
  const float* b;  // the panel at the block's first k
  int64_t kc;      // k steps in this block
  float* c;
  int64_t ldc;
  const float* bias;  // at the panel's first column; null for none (or not the last block)
  __mmask16 m0, m1;   // valid columns of the panel's two 16-lane halves
  bool accumulate;    // add C's current values (partial sums of earlier K blocks)
  bool relu;
};

// MR rows x the panel's 32 columns, or its first 16 only (kHalf: a panel with at most 16 valid
// columns, e.g. a 10-class output layer, skips the empty half's multiply-adds).
template <int MR, bool kHalf>
__attribute__((target("avx512f"))) void Tile(const TileArgs& t) {
  __m512 c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  const float* a = t.a;
  const float* b = t.b;
  int64_t k = 0;
  if constexpr (MR == 1) {
    // One row (FC at batch 1, a matrix-vector product, bound by reading B): four k steps at a time
    // into four pairs of accumulators, so that the multiply-adds' latency does not pace B's stream.
    // The MLP's 784x512 and 512x512 layers: 32 us against Eigen's GEMV on the plain layout 38 us
    // (1 thread), 19 against 28 us (2 threads; benchmarks/RESULTS.md, thirteenth session).
    // k step j of each four into lo[j] / hi[j] (the panel's two 16-column halves).
    __m512 lo[4], hi[4];
    for (int j = 0; j < 4; ++j) lo[j] = hi[j] = _mm512_setzero_ps();
    for (; k + 4 <= t.kc; k += 4, b += 4 * kPanelWidth) {
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m512 x = _mm512_set1_ps(a[k + j]);
        lo[j] = _mm512_fmadd_ps(x, _mm512_load_ps(b + j * kPanelWidth), lo[j]);
        if (!kHalf) hi[j] = _mm512_fmadd_ps(x, _mm512_load_ps(b + j * kPanelWidth + 16), hi[j]);
      }
    }
    c0[0] = _mm512_add_ps(_mm512_add_ps(lo[0], lo[1]), _mm512_add_ps(lo[2], lo[3]));
    c1[0] = _mm512_add_ps(_mm512_add_ps(hi[0], hi[1]), _mm512_add_ps(hi[2], hi[3]));
  }
  for (; k < t.kc; ++k, b += kPanelWidth) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = kHalf ? b0 : _mm512_load_ps(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * t.lda + k]);
      c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
      if (!kHalf) c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
  const __m512 bias0 = t.bias ? _mm512_maskz_loadu_ps(t.m0, t.bias) : zero;
  const __m512 bias1 = t.bias && !kHalf ? _mm512_maskz_loadu_ps(t.m1, t.bias + 16) : zero;
  for (int r = 0; r < MR; ++r) {
    float* c = t.c + r * t.ldc;
    __m512 v0 = _mm512_add_ps(c0[r], bias0), v1 = _mm512_add_ps(c1[r], bias1);
    if (t.accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(t.m0, c));
      if (!kHalf) v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(t.m1, c + 16));
    }
    if (t.relu) {
      v0 = _mm512_max_ps(v0, zero);
      v1 = _mm512_max_ps(v1, zero);
    }
    _mm512_mask_storeu_ps(c, t.m0, v0);
    if (!kHalf) _mm512_mask_storeu_ps(c + 16, t.m1, v1);
  }
}

using TileFn = void (*)(const TileArgs&);
template <bool kHalf, int... R>
constexpr auto MakeTiles(std::integer_sequence<int, R...>) {
  return std::array<TileFn, sizeof...(R)>{{&Tile<R + 1, kHalf>...}};
}
// kTiles[half][r - 1]: r rows, the whole panel (half = 0) or its first 16 columns (half = 1).
const std::array<TileFn, kTileRows> kTiles[2] = {MakeTiles<false>(std::make_integer_sequence<int, kTileRows>{}),
                                                 MakeTiles<true>(std::make_integer_sequence<int, kTileRows>{})};

__mmask16 LaneMask(int64_t valid) {
  return valid >= 16 ? __mmask16(0xFFFF) : valid <= 0 ? __mmask16(0) : __mmask16((1u << valid) - 1);
}

}  // namespace

bool Supported() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}

void PackedMatrix::Free::operator()(float* p) const { std::free(p); }

PackedMatrix::PackedMatrix(int64_t K, int64_t N) : K_(K), N_(N) {
  const int64_t floats = CheckedMul(CheckedMul(panels(), K, "packed GEMM size"), kPanelWidth, "packed GEMM size");
  const size_t bytes = (CheckedByteSize(std::max<int64_t>(floats, 16), sizeof(float), "packed GEMM size") + 63) / 64 * 64;
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!data_) throw std::bad_alloc();
}

std::shared_ptr<const PackedMatrix> PackedMatrix::FromTransposed(const float* w, int64_t N, int64_t K) {
  std::shared_ptr<PackedMatrix> m(new PackedMatrix(K, N));
  for (int64_t p = 0; p < m->panels(); ++p) {
    float* dst = m->mutable_panel(p);
    for (int64_t j = 0; j < kPanelWidth; ++j) {
      const int64_t n = p * kPanelWidth + j;
      const float* row = n < N ? w + n * K : nullptr;  // column n of B is row n of W
      for (int64_t k = 0; k < K; ++k) dst[k * kPanelWidth + j] = row ? row[k] : 0.f;
    }
  }
  return m;
}

std::shared_ptr<const PackedMatrix> PackedMatrix::FromRowMajor(const float* b, int64_t K, int64_t N) {
  std::shared_ptr<PackedMatrix> m(new PackedMatrix(K, N));
  for (int64_t p = 0; p < m->panels(); ++p) {
    float* dst = m->mutable_panel(p);
    const int64_t n0 = p * kPanelWidth, width = std::min(kPanelWidth, N - n0);
    for (int64_t k = 0; k < K; ++k) {
      std::copy(b + k * N + n0, b + k * N + n0 + width, dst + k * kPanelWidth);
      std::fill(dst + k * kPanelWidth + width, dst + (k + 1) * kPanelWidth, 0.f);
    }
  }
  return m;
}

PreparedWeightCache<PackSource, PackedMatrix>& PackedWeightCache() {
  static auto* c = new PreparedWeightCache<PackSource, PackedMatrix>([](const PackedMatrix& m) {  // outlives every operator
    return m.rows() * m.panels() * kPanelWidth * static_cast<int64_t>(sizeof(float));
  });
  return *c;
}

void GemmPacked(int64_t M, const float* A, int64_t lda, const PackedMatrix& B, const float* bias, bool relu, float* C,
                int64_t ldc, int workers) {
  const int64_t K = B.rows(), N = B.cols();
  if (M <= 0 || N <= 0) return;
  const int64_t k_blocks = std::max<int64_t>(1, (K + kMaxKBlock - 1) / kMaxKBlock);
  const int64_t kc = K == 0 ? 0 : (K + k_blocks - 1) / k_blocks;
  const int64_t groups = (M + kGroupRows - 1) / kGroupRows, tasks = B.panels() * groups;
  // A single row is bound by reading B, not by its multiply-adds: split it once B is large.
  if (static_cast<double>(M) * N * K < kMinParallelMacs && !(M == 1 && N * K >= kMinParallelGemvFloats)) workers = 1;
  workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(workers, tasks)));
  math::ParallelFor(tasks, workers, [&](int64_t task, int) {
    const int64_t p = task / groups, m_begin = (task % groups) * kGroupRows, m_end = std::min(M, m_begin + kGroupRows);
    const int64_t n0 = p * kPanelWidth;
    TileArgs t;
    t.lda = lda;
    t.ldc = ldc;
    t.m0 = LaneMask(N - n0);
    t.m1 = LaneMask(N - n0 - 16);
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      const int64_t k0 = kb * kc;
      const bool last = kb + 1 == k_blocks;
      t.kc = std::min(kc, K - k0);
      t.b = B.panel(p) + k0 * kPanelWidth;
      t.bias = last && bias ? bias + n0 : nullptr;
      t.accumulate = kb > 0;
      t.relu = last && relu;
      // Rows split evenly over the fewest tiles (16 rows: 8 + 8, not 12 + 4, whose 8 accumulators
      // cannot hide the multiply-add latency).
      const int64_t rows = m_end - m_begin, tiles = (rows + kTileRows - 1) / kTileRows;
      for (int64_t i = 0, m = m_begin; i < tiles; ++i) {
        const int64_t r = rows / tiles + (i < rows % tiles ? 1 : 0);
        t.a = A + m * lda + k0;
        t.c = C + m * ldc + n0;
        kTiles[t.m1 == 0][r - 1](t);
        m += r;
      }
    }
  });
}

}  // namespace cpu_gemm
}  // namespace hetnet
