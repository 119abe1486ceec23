// AVX-512F tiles of the packed GEMM: 12 rows x 32 columns of accumulators (24 registers, + 2 of B
// + 1 broadcast of A); a panel with at most 16 valid columns (a 10-class output layer) skips the
// empty half's multiply-adds; column tails through masked loads and stores.
#include <immintrin.h>

// GCC 12 takes _mm512_max_ps's _mm512_undefined_ps() operand for an uninitialized read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <array>
#include <utility>

#include "device/cpu_gemm_tiles.h"
#include "device/cpu_packed_gemm.h"

namespace hetnet {
namespace cpu_gemm {
namespace detail {
namespace {

constexpr int kRows = 12;

__mmask16 LaneMask(int64_t valid) {
  return valid >= 16 ? __mmask16(0xFFFF) : valid <= 0 ? __mmask16(0) : __mmask16((1u << valid) - 1);
}

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
  // As the AVX2 tiles (cpu_gemm_tiles_avx2.cc, Half): rows are read through one pointer per three
  // rows, stepping one float per k, so a broadcast needs no address arithmetic; k unrolled by 4.
  const int64_t lda = t.lda, kc = t.kc;
  const float* base[4];
  for (int g = 0; g < 4; ++g) base[g] = 3 * g < MR ? a + k + 3 * g * lda : a;
#pragma GCC unroll 4
  for (; k < kc; ++k, b += kPanelWidth) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = kHalf ? b0 : _mm512_load_ps(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(base[r / 3][(r % 3) * lda]);
      c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
      if (!kHalf) c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) ++base[g];
  }
  const __mmask16 m0 = LaneMask(t.valid), m1 = LaneMask(t.valid - 16);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 bias0 = t.bias ? _mm512_maskz_loadu_ps(m0, t.bias) : zero;
  const __m512 bias1 = t.bias && !kHalf ? _mm512_maskz_loadu_ps(m1, t.bias + 16) : zero;
  for (int r = 0; r < MR; ++r) {
    float* c = t.c + r * t.ldc;
    __m512 v0 = _mm512_add_ps(c0[r], bias0), v1 = _mm512_add_ps(c1[r], bias1);
    if (t.accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, c));
      if (!kHalf) v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, c + 16));
    }
    if (t.relu) {
      v0 = _mm512_max_ps(v0, zero);
      v1 = _mm512_max_ps(v1, zero);
    }
    _mm512_mask_storeu_ps(c, m0, v0);
    if (!kHalf) _mm512_mask_storeu_ps(c + 16, m1, v1);
  }
}

template <int MR>
void PanelTile(const TileArgs& t) {
  if (t.valid <= 16) return Tile<MR, true>(t);
  Tile<MR, false>(t);
}

template <int... R>
constexpr std::array<TileFn, sizeof...(R)> MakeTiles(std::integer_sequence<int, R...>) {
  return {{&PanelTile<R + 1>...}};
}
constexpr std::array<TileFn, kRows> kTiles = MakeTiles(std::make_integer_sequence<int, kRows>{});

}  // namespace

const TileKernels& Avx512Tiles() {
  static const TileKernels k{kRows, kTiles.data()};
  return k;
}

}  // namespace detail
}  // namespace cpu_gemm
}  // namespace hetnet
