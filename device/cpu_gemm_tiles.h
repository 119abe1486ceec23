// Register-tile kernels of hetnet's packed GEMM (device/cpu_packed_gemm.h), one set per instruction
// set: AVX-512F (12 rows x the panel's 32 columns) and AVX2+FMA (6 rows x 16 columns, twice per panel).
// Internal to the GEMM: GemmPacked blocks, threads and dispatches; a tile only multiplies.
#pragma once

#include <cstdint>

#include "device/cpu_packed_gemm.h"

namespace hetnet {
namespace cpu_gemm {
namespace detail {

struct TileArgs {
  const float* a;  // first row of A, at the block's first k
  int64_t lda;
  const float* b;  // the panel at the block's first k
  int64_t kc;      // k steps in this block
  float* c;
  int64_t ldc;
  const float* bias;  // at the panel's first column; null for none (or not the last block)
  int64_t valid;      // valid columns of the panel, 1..kPanelWidth
  bool accumulate;    // add C's current values (partial sums of earlier K blocks)
  bool relu;
};

using TileFn = void (*)(const TileArgs&);

// tile[r - 1] computes r rows (1..max_rows) of one panel's valid columns.
struct TileKernels {
  int max_rows;
  const TileFn* tile;
};

const TileKernels& Avx512Tiles();  // needs AVX-512F at run time
const TileKernels& Avx2Tiles();    // needs AVX2 and FMA at run time
bool Avx2Supported();

// GemmPacked on a given tile set (tests run every set this CPU has).
void GemmWithTiles(const TileKernels& tiles, int64_t M, const float* A, int64_t lda, const PackedMatrix& B,
                   const float* bias, bool relu, float* C, int64_t ldc, int workers);

}  // namespace detail
}  // namespace cpu_gemm
}  // namespace hetnet
