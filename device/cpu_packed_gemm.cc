#include "device/cpu_packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "core/checked_size.h"
#include "device/cpu_gemm_tiles.h"
#include "device/math.h"

namespace hetnet {
namespace cpu_gemm {
namespace {

constexpr int64_t kGroupRows = 48;  // rows of one parallel task (4 or 8 tiles reuse the panel's block from L1/L2)
// K is cut into blocks of at most this many, so that a tile's block of A (AVX-512: 12 x 832 floats,
// 39 KiB, in a 48 KiB L1; AVX2: 6 x 832, 20 KiB, in 32 KiB) stays in L1 while the panel's block
// streams from L2; shorter K runs in one block (no partial sums through C). K = 784 in one block
// measured 3-5% faster than in two of 392 (AVX-512), and 832 than 256 or 384 (AVX2, RESULTS.md).
constexpr int64_t kMaxKBlock = 832;
// Calls below this many multiply-adds stay on the calling thread (a pool hand-off costs ~ microseconds).
constexpr double kMinParallelMacs = 1 << 19;
constexpr int64_t kMinParallelGemvFloats = 1 << 18;  // of B, for one row (1 MiB)

bool HasAvx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// The widest tile set this CPU runs; null for none.
const detail::TileKernels* Tiles() {
  static const detail::TileKernels* k = __builtin_cpu_supports("avx512f") ? &detail::Avx512Tiles()
                                        : HasAvx2()                       ? &detail::Avx2Tiles()
                                                                          : nullptr;
  return k;
}

}  // namespace

bool Supported() { return Tiles() != nullptr; }

const char* TileIsa() { return !Tiles() ? "none" : Tiles() == &detail::Avx512Tiles() ? "avx512f" : "avx2"; }

void PackedMatrix::Free::operator()(float* p) const { std::free(p); }

PackedMatrix::PackedMatrix(int64_t K, int64_t N) : K_(K), N_(N) {
  const int64_t floats = CheckedMul(CheckedMul(panels(), K, "packed GEMM size"), kPanelWidth, "packed GEMM size");
  const size_t bytes = (CheckedByteSize(std::max<int64_t>(floats, 16), sizeof(float), "packed GEMM size") + 63) / 64 * 64;
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!data_) throw std::bad_alloc();
}

std::shared_ptr<PackedMatrix> PackedMatrix::Uninitialized(int64_t K, int64_t N) {
  return std::shared_ptr<PackedMatrix>(new PackedMatrix(K, N));
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
  detail::GemmWithTiles(*Tiles(), M, A, lda, B, bias, relu, C, ldc, workers);
}

namespace detail {

bool Avx2Supported() { return HasAvx2(); }

void GemmWithTiles(const TileKernels& tiles, int64_t M, const float* A, int64_t lda, const PackedMatrix& B,
                   const float* bias, bool relu, float* C, int64_t ldc, int workers) {
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
    t.valid = std::min(kPanelWidth, N - n0);
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
      const int64_t rows = m_end - m_begin, count = (rows + tiles.max_rows - 1) / tiles.max_rows;
      for (int64_t i = 0, m = m_begin; i < count; ++i) {
        const int64_t r = rows / count + (i < rows % count ? 1 : 0);
        t.a = A + m * lda + k0;
        t.c = C + m * ldc + n0;
        tiles.tile[r - 1](t);
        m += r;
      }
    }
  });
}

}  // namespace detail
}  // namespace cpu_gemm
}  // namespace hetnet
