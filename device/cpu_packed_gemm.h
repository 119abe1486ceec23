// hetnet's own single-precision GEMM for a constant right-hand side (FC weights): C[M, N] = A[M, K] x B[K, N]
// (+ bias[N], then Relu if asked), with B packed once into 32-column panels and register-tile
// kernels (device/cpu_gemm_tiles.h): AVX-512F, 12 rows x 32 columns of accumulators, or AVX2+FMA,
// 6 rows x 16 columns run on each half of a panel; a row tail gets its own instantiation, a column
// tail masked loads and stores. Made because oneDNN 2.6's inner product reached 99-135 GFLOP/s on one core
// of the eleventh session's host on the FC shapes of batch 16-64, where such a kernel reached 155-165
// (benchmarks/RESULTS.md); on a Zen 4 host it runs at that core's FMA peak (113-115 against 111).
// A single row (M = 1) runs a matrix-vector kernel over the same panels.
//
// Threads: the (panel, row-group) tiles of one call are spread over the intra-op pool (math::ParallelFor),
// so a descheduled thread never stalls the call, unlike an OpenMP team.
// Only on CPUs with AVX-512F or AVX2+FMA (Supported()); callers fall back to another engine elsewhere.
// On AVX2 (a 2-core AMD EPYC), 6x16 tiles ran the MLP's FC layers at batch 32 faster than oneDNN
// 2.6's inner product (benchmarks/RESULTS.md, eighteenth session).
#pragma once

#include <cstdint>
#include <memory>

#include "device/prepared_weights.h"

namespace hetnet {
namespace cpu_gemm {

// True when this process may run the kernels (the CPU has AVX-512F, or AVX2 and FMA).
bool Supported();
// The tile set GemmPacked runs here: "avx512f", "avx2" or "none".
const char* TileIsa();

constexpr int64_t kPanelWidth = 32;  // columns of B per packed panel (two AVX-512 registers)

// B[K, N] in panels of kPanelWidth columns: panel p holds rows k = 0..K-1 of columns
// [32p, 32p + 32), each row's 32 floats contiguous, columns past N zero. 64-byte aligned.
class PackedMatrix {
 public:
  // B = W^T for W stored [N, K] row-major (FC's weights).
  static std::shared_ptr<const PackedMatrix> FromTransposed(const float* w, int64_t N, int64_t K);
  // B stored [K, N] row-major (FCTransposed's weights).
  static std::shared_ptr<const PackedMatrix> FromRowMajor(const float* b, int64_t K, int64_t N);
  // B[K, N] uninitialized, for a producer that writes the panels itself (mutable_panel: every float
  // of every panel, zeros past N), saving a row-major copy of B that would only be packed.
  static std::shared_ptr<PackedMatrix> Uninitialized(int64_t K, int64_t N);

  int64_t rows() const { return K_; }
  int64_t cols() const { return N_; }
  int64_t panels() const { return (N_ + kPanelWidth - 1) / kPanelWidth; }
  const float* panel(int64_t p) const { return data_.get() + p * K_ * kPanelWidth; }
  float* mutable_panel(int64_t p) { return data_.get() + p * K_ * kPanelWidth; }

 private:
  PackedMatrix(int64_t K, int64_t N);
  struct Free {
    void operator()(float* p) const;
  };
  int64_t K_, N_;
  std::unique_ptr<float, Free> data_;
};

// How a weight tensor is read into a PackedMatrix: stored [K, N] (transposed = true, B itself) or
// [N, K] (B = W^T), and B's logical size.
struct PackSource {
  bool transposed;
  int64_t K, N;
  bool operator==(const PackSource& o) const { return transposed == o.transposed && K == o.K && N == o.N; }
};
// Packed weights of the process, one per weight version and source, shared by every operator
// instance that reads that weight (device/prepared_weights.h).
PreparedWeightCache<PackSource, PackedMatrix>& PackedWeightCache();

// C[m, n] = sum_k A[m, k] B[k, n] (+ bias[n]) for m < M, n < B.cols(); then max(., 0) when relu.
// A has row stride lda (>= K), C row stride ldc (>= N); bias may be null. Uses up to `workers`
// threads of the intra-op pool. Requires Supported().
void GemmPacked(int64_t M, const float* A, int64_t lda, const PackedMatrix& B, const float* bias, bool relu, float* C,
                int64_t ldc, int workers);

}  // namespace cpu_gemm
}  // namespace hetnet
