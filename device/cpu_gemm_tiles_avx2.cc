// AVX2+FMA tiles of the packed GEMM, for CPUs without AVX-512: 6 rows x 16 columns of accumulators
// (12 of the 16 registers, + 2 of B + 1 broadcast of A), run on each 16-column half of a 32-column
// panel that has valid columns; one row (a matrix-vector product) streams the whole panel, two k
// steps at a time into eight accumulators. Column tails through masked loads and stores (a full
// half stores plainly: AMD's masked stores are slow).
#include <immintrin.h>

#include <array>
#include <utility>

#include "device/cpu_gemm_tiles.h"
#include "device/cpu_packed_gemm.h"

namespace hetnet {
namespace cpu_gemm {
namespace detail {
namespace {

constexpr int kRows = 6;

#define HETNET_AVX2 __attribute__((target("avx2,fma")))

// Lanes [0, valid) of an 8-float vector.
HETNET_AVX2 __m256i LaneMask(int64_t valid) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid < 0 ? 0 : valid > 8 ? 8 : valid)), iota);
}

// 8 floats at p, or its lanes of mask m only (a column tail).
HETNET_AVX2 __attribute__((always_inline)) inline __m256 Load(const float* p, bool full, __m256i m) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

// Row r's 16 columns of half h: + bias, + C (later K blocks), Relu, store the valid ones.
HETNET_AVX2 __attribute__((always_inline)) inline void StoreHalf(const TileArgs& t, int r, int h, __m256 v0, __m256 v1) {
  const int64_t valid = t.valid - 16 * h;  // >= 1
  const bool full = valid >= 16;
  const __m256i m0 = LaneMask(valid), m1 = LaneMask(valid - 8);
  float* c = t.c + r * t.ldc + 16 * h;
  if (t.bias) {
    v0 = _mm256_add_ps(v0, Load(t.bias + 16 * h, full, m0));
    v1 = _mm256_add_ps(v1, Load(t.bias + 16 * h + 8, full, m1));
  }
  if (t.accumulate) {
    v0 = _mm256_add_ps(v0, Load(c, full, m0));
    v1 = _mm256_add_ps(v1, Load(c + 8, full, m1));
  }
  if (t.relu) {
    v0 = _mm256_max_ps(v0, _mm256_setzero_ps());
    v1 = _mm256_max_ps(v1, _mm256_setzero_ps());
  }
  if (full) {
    _mm256_storeu_ps(c, v0);
    _mm256_storeu_ps(c + 8, v1);
  } else {
    _mm256_maskstore_ps(c, m0, v0);
    _mm256_maskstore_ps(c + 8, m1, v1);
  }
}

// MR rows x the 16 columns of half h. The loop body is kept to its 12 multiply-adds, 2 loads of B
// and 6 broadcasts: rows 0-2 and 3-5 are read through two pointers that step one float per k, so
// every broadcast addresses [row pointer + lda * 0/4/8 bytes] with no arithmetic of its own, and
// k is unrolled by 4. Computing each row's address per step (a[r * lda + k]) cost 30 instructions
// per step, and when the host runs another VM's thread on this core's sibling (this VM's slow
// stretches) the shared front end, not the FMA units, set the pace: the MLP at batch 64 ran a
// median 1.37 ms against 1.07 lean, the same 0.9 ms at best (benchmarks/RESULTS.md, twentieth session).
template <int MR>
HETNET_AVX2 void Half(const TileArgs& t, int h) {
  __m256 c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm256_setzero_ps();
  const int64_t lda = t.lda, kc = t.kc;
  const float* a0 = t.a;
  const float* a3 = MR > 3 ? t.a + 3 * lda : t.a;  // (never past A when there are no rows 3-5)
  const float* b = t.b + 16 * h;
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss((r < 3 ? a0 : a3) + (r % 3) * lda);
      c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
    }
    ++a0, ++a3, b += kPanelWidth;
  }
  // Unrolled, so the accumulators stay in registers (a loop indexing them kept them on the stack).
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) StoreHalf(t, r, h, c0[r], c1[r]);
}

// One row: bound by reading B, so the whole panel at once, two k steps at a time (eight
// accumulators hide the multiply-adds' latency); the empty half of a narrow panel is skipped.
template <bool kNarrow>
HETNET_AVX2 void Row(const TileArgs& t) {
  constexpr int Q = kNarrow ? 2 : 4;  // 8-float vectors per panel row that are read
  __m256 acc[2][4];
  for (auto& s : acc)
    for (auto& v : s) v = _mm256_setzero_ps();
  const float* a = t.a;
  const float* b = t.b;
  int64_t k = 0;
  for (; k + 2 <= t.kc; k += 2, b += 2 * kPanelWidth) {
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) {
      const __m256 x = _mm256_broadcast_ss(a + k + j);
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) acc[j][q] = _mm256_fmadd_ps(x, _mm256_load_ps(b + j * kPanelWidth + 8 * q), acc[j][q]);
    }
  }
  if (k < t.kc) {
    const __m256 x = _mm256_broadcast_ss(a + k);
    for (int q = 0; q < Q; ++q) acc[0][q] = _mm256_fmadd_ps(x, _mm256_load_ps(b + 8 * q), acc[0][q]);
  }
  StoreHalf(t, 0, 0, _mm256_add_ps(acc[0][0], acc[1][0]), _mm256_add_ps(acc[0][1], acc[1][1]));
  if (!kNarrow) StoreHalf(t, 0, 1, _mm256_add_ps(acc[0][2], acc[1][2]), _mm256_add_ps(acc[0][3], acc[1][3]));
}

template <int MR>
void PanelTile(const TileArgs& t) {
  if constexpr (MR == 1) {
    if (t.valid <= 16) return Row<true>(t);
    return Row<false>(t);
  } else {
    Half<MR>(t, 0);
    if (t.valid > 16) Half<MR>(t, 1);
  }
}

template <int... R>
constexpr std::array<TileFn, sizeof...(R)> MakeTiles(std::integer_sequence<int, R...>) {
  return {{&PanelTile<R + 1>...}};
}
constexpr std::array<TileFn, kRows> kTiles = MakeTiles(std::make_integer_sequence<int, kRows>{});

}  // namespace

const TileKernels& Avx2Tiles() {
  static const TileKernels k{kRows, kTiles.data()};
  return k;
}

}  // namespace detail
}  // namespace cpu_gemm
}  // namespace hetnet
