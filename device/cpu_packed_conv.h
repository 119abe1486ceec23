// A channels-last 2-D convolution on the packed GEMM's tiles without an im2col copy: each tile of
// output pixels reads its input pixels' channel runs in place, tap by tap (device/cpu_gemm_tiles.h,
// gathered rows), against the filter packed as B [taps x C, M] (PackedMatrix::FromFilterCS, or
// FromTransposed for a [M, kH, kW, C] filter). Padding reads a row of zeros.
// On the AVX2+FMA tiles, on any CPU that has them (GatherSupported()), AVX-512 ones included.
#pragma once

#include <cstdint>

#include "device/cpu_packed_gemm.h"

namespace hetnet {
namespace cpu_gemm {

// One image: x [H, W, C], y [OH, OW, M].
struct ConvShape {
  int64_t H, W, C, OH, OW;
  int kh, kw, sh, sw, dh, dw, pt, pl;
};

bool GatherSupported();

// y = conv(x) (+ bias[M]) (+ y when accumulate), then max(., 0) when relu; filter = B (K = kh kw C
// rows, M = B.cols() columns). Up to `workers` threads of the intra-op pool. Requires GatherSupported().
void ConvPacked(const ConvShape& s, const float* x, const PackedMatrix& B, const float* bias, bool relu, float* y,
                bool accumulate, int workers);

}  // namespace cpu_gemm
}  // namespace hetnet
