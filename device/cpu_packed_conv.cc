#include "device/cpu_packed_conv.h"

#include <algorithm>
#include <vector>

#include "device/cpu_gemm_tiles.h"
#include "device/math.h"

namespace hetnet {
namespace cpu_gemm {
namespace {

// Output pixels of one parallel task, at most: groups are balanced (ResNet's 7x7 stage is one group
// of 49, not 48 + 1, whose lone pixel would stream the 9 MiB filter once more for itself).
constexpr int64_t kMaxGroupPixels = 96;
constexpr int64_t kMaxBlockK = 832;   // k steps per block (whole taps): as the GEMM's K blocks
constexpr int kMaxTileRows = 6;       // the AVX2 tiles
constexpr int64_t kMaxBlockTaps = 64;
constexpr double kMinParallelMacs = 1 << 19;

}  // namespace

bool GatherSupported() { return detail::Avx2Supported(); }

void ConvPacked(const ConvShape& s, const float* x, const PackedMatrix& B, const float* bias, bool relu, float* y,
                bool accumulate, int workers) {
  const detail::TileKernels& tiles = detail::Avx2Tiles();
  const int64_t taps = int64_t{s.kh} * s.kw, C = s.C, M = B.cols(), pixels = s.OH * s.OW;
  if (pixels <= 0 || M <= 0) return;
  const int64_t block_taps =
      std::max<int64_t>(1, std::min<int64_t>({taps, kMaxBlockTaps, kMaxBlockK / std::max<int64_t>(C, 1)}));
  const int64_t groups = (pixels + kMaxGroupPixels - 1) / kMaxGroupPixels, panels = B.panels(), tasks = groups * panels;
  const int64_t group_pixels = (pixels + groups - 1) / groups;
  if (static_cast<double>(pixels) * M * taps * C < kMinParallelMacs) workers = 1;
  workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(workers, tasks)));
  const std::vector<float> zeros(static_cast<size_t>(C), 0.f);  // what a padded tap reads
  math::ParallelFor(tasks, workers, [&](int64_t task, int) {
    // A group's pixels for all panels in a row: its input rows stay in cache, the filter streams.
    const int64_t g = task / panels, p = task % panels;
    const int64_t m_begin = g * group_pixels, m_end = std::min(pixels, m_begin + group_pixels);
    const int64_t n0 = p * kPanelWidth;
    const float* rows[kMaxTileRows * kMaxBlockTaps];  // one tile's rows x the block's taps
    detail::TileArgs t;
    t.ldc = M;
    t.valid = std::min(kPanelWidth, M - n0);
    t.channels = C;
    t.rows = rows;
    t.tap0 = 0;
    const int64_t count = (m_end - m_begin + tiles.max_rows - 1) / tiles.max_rows;
    // K blocks outside, tiles inside: the panel's block (at most kMaxBlockK x 32 floats) stays in
    // L2 for every tile of the group and both halves of each.
    for (int64_t tap0 = 0; tap0 < taps; tap0 += block_taps) {
      t.taps = t.block_taps = std::min(block_taps, taps - tap0);
      t.kc = t.block_taps * C;
      t.b = B.panel(p) + tap0 * C * kPanelWidth;
      const bool last = tap0 + t.block_taps >= taps;
      t.bias = last && bias ? bias + n0 : nullptr;
      t.accumulate = tap0 > 0 || accumulate;
      t.relu = last && relu;
      for (int64_t i = 0, m = m_begin; i < count; ++i) {
        const int64_t r = (m_end - m_begin) / count + (i < (m_end - m_begin) % count ? 1 : 0);
        for (int64_t row = 0; row < r; ++row) {
          const int64_t oh = (m + row) / s.OW, ow = (m + row) % s.OW;
          for (int64_t q = 0; q < t.block_taps; ++q) {
            const int64_t tap = tap0 + q, ih = oh * s.sh - s.pt + tap / s.kw * s.dh;
            const int64_t iw = ow * s.sw - s.pl + tap % s.kw * s.dw;
            rows[row * t.block_taps + q] =
                ih < 0 || ih >= s.H || iw < 0 || iw >= s.W ? zeros.data() : x + (ih * s.W + iw) * C;
          }
        }
        t.c = y + m * M + n0;
        tiles.gather_tile[r - 1](t);
        m += r;
      }
    }
  });
}

}  // namespace cpu_gemm
}  // namespace hetnet
