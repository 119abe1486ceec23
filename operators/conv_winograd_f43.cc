#include "operators/conv_winograd_f43.h"

#include <algorithm>
#include <cstring>

#include "device/cpu_packed_gemm.h"
#include "device/math.h"

namespace hetnet {

struct WinogradF43Conv::Filter {
  std::shared_ptr<const cpu_gemm::PackedMatrix> u[36];
};

namespace {

constexpr int kBlock = 8;  // channels per nChw8c block: one vector
using Vec = float __attribute__((vector_size(kBlock * sizeof(float))));

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// B^T applied to six values d[0], d[s], ..., d[5s], written to o[0], o[os], ..., o[5os].
inline void InputTransform6(const Vec* d, int s, Vec* o, int os) {
  const Vec d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
  o[0] = 4.0f * d0 - 5.0f * d2 + d4;
  o[os] = d3 + d4 - 4.0f * (d1 + d2);
  o[2 * os] = d4 - d3 + 4.0f * (d1 - d2);
  o[3 * os] = d4 - d2 + 2.0f * (d3 - d1);
  o[4 * os] = d4 - d2 + 2.0f * (d1 - d3);
  o[5 * os] = 4.0f * d1 - 5.0f * d3 + d5;
}

// A^T applied to six values m[0], m[s], ..., m[5s], written to o[0], o[os], o[2os], o[3os].
inline void OutputTransform6(const Vec* m, int s, Vec* o, int os) {
  const Vec a = m[s] + m[2 * s], b = m[s] - m[2 * s], c = m[3 * s] + m[4 * s], d = m[3 * s] - m[4 * s];
  o[0] = m[0] + a + c;
  o[os] = b + 2.0f * d;
  o[2 * os] = a + 4.0f * c;
  o[3 * os] = b + 8.0f * d + m[5 * s];
}

// U = G g G^T for each (input c, output m) pair, in double, written straight into the 36 packed
// [C, M] matrices (panels of 32 output channels): one (panel, input channel) pair per work item,
// spread over the intra-op pool. For ResNet-18 this is 151 MB of transformed filters.
std::shared_ptr<const WinogradF43Conv::Filter> TransformFilter(const float* w, int64_t C, int64_t M, int workers) {
  static const double G[6][3] = {{1.0 / 4, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};
  constexpr int64_t kWidth = cpu_gemm::kPanelWidth;
  std::shared_ptr<cpu_gemm::PackedMatrix> u[36];
  for (auto& ui : u) ui = cpu_gemm::PackedMatrix::Uninitialized(C, M);
  const int64_t panels = u[0]->panels();
  math::ParallelFor(panels * C, workers, [&](int64_t item, int) {
    const int64_t p = item / C, c = item % C;
    float out[36][kWidth] = {};  // columns past M stay zero
    for (int64_t j = 0; j < kWidth && p * kWidth + j < M; ++j) {
      const float* g = w + ((p * kWidth + j) * C + c) * 9;
      double gg[6][3];  // G g
      for (int i = 0; i < 6; ++i)
        for (int b = 0; b < 3; ++b) gg[i][b] = G[i][0] * g[b] + G[i][1] * g[3 + b] + G[i][2] * g[6 + b];
      for (int i = 0; i < 6; ++i)
        for (int k = 0; k < 6; ++k)
          out[i * 6 + k][j] = static_cast<float>(gg[i][0] * G[k][0] + gg[i][1] * G[k][1] + gg[i][2] * G[k][2]);
    }
    for (int xi = 0; xi < 36; ++xi) std::memcpy(u[xi]->mutable_panel(p) + c * kWidth, out[xi], sizeof out[xi]);
  });
  auto f = std::make_shared<WinogradF43Conv::Filter>();
  for (int xi = 0; xi < 36; ++xi) f->u[xi] = std::move(u[xi]);
  return f;
}

PreparedWeightCache<WinogradF43Conv::Layout, WinogradF43Conv::Filter>& FilterCache() {
  static auto* c = new PreparedWeightCache<WinogradF43Conv::Layout, WinogradF43Conv::Filter>(  // outlives every op
      [](const WinogradF43Conv::Filter& f) {
        int64_t bytes = 0;
        for (const auto& u : f.u) bytes += u->rows() * u->panels() * cpu_gemm::kPanelWidth * int64_t{sizeof(float)};
        return bytes;
      });
  return *c;
}

bool OneDnnHasWinograd() {  // oneDNN 2.6's Winograd kernels need AVX-512
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
#else
  return false;
#endif
}

// The 4x4 output tiles: tiles_h x tiles_w per image, numbered image by image, row by row.
struct TileGrid {
  int64_t tiles_h, tiles_w;
  explicit TileGrid(const ConvPoolGeom& g) : tiles_h((g.OH + 3) / 4), tiles_w((g.OW + 3) / 4) {}
  int64_t Count(int64_t images) const { return images * tiles_h * tiles_w; }
  // Tile t's image and its first output row and column.
  void Locate(int64_t t, int64_t* n, int64_t* oy, int64_t* ox) const {
    *n = t / (tiles_h * tiles_w);
    *oy = t / tiles_w % tiles_h * 4;
    *ox = t % tiles_w * 4;
  }
};

}  // namespace

bool WinogradF43Conv::Fits(const ConvPoolGeom& g) {
  return g.channel_block == kBlock && g.blocked_input() && !g.filter_hwc && g.group == 1 && g.kh == 3 && g.kw == 3 &&
         g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.M % kBlock == 0 && g.N > 0 && g.OH > 0 && g.OW > 0 &&
         cpu_gemm::Supported() && !OneDnnHasWinograd();
}

bool WinogradF43Conv::Pays(const ConvPoolGeom& g) {
  // Measured against oneDNN's direct kernel per layer (benchmarks/RESULTS.md, 2026-11-28): 2-2.5x
  // on ResNet's layers of 64-256 channels, 1.3-1.5x on the 7x7 ones of 512; no gain under 32
  // channels (the GEMMs' K is too short), 1.07x with 1024 (a 151 MB transformed filter).
  const int64_t tiles = TileGrid(g).Count(g.N);
  const double filter_bytes = 36.0 * g.C * g.M * sizeof(float);
  return g.C >= 32 && g.M >= 32 && filter_bytes <= 64.0 * (1 << 20) && 36 * tiles * 3 <= 9 * g.N * g.OH * g.OW * 2;
}

// The 6x6 input tile of output tile `tile`, every channel block, transformed into its 36
// positions: v[xi * ld + channel], with zeros outside the image.
void WinogradF43Conv::InputTile(const ConvPoolGeom& g, const float* x, int64_t tile, float* v, int64_t ld) {
  const int64_t H = g.H, W = g.W, CB = g.C / kBlock;
  int64_t n, y0, x0;
  TileGrid(g).Locate(tile, &n, &y0, &x0);
  y0 -= g.pt;
  x0 -= g.pl;
  const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= H && x0 + 6 <= W;
  for (int64_t cb = 0; cb < CB; ++cb) {
    const float* xc = x + (n * CB + cb) * H * W * kBlock;
    Vec d[36], e[36];
    for (int r = 0; r < 6; ++r) {
      for (int s = 0; s < 6; ++s) {
        const int64_t iy = y0 + r, ix = x0 + s;
        d[r * 6 + s] = inside || (iy >= 0 && iy < H && ix >= 0 && ix < W) ? Load(xc + (iy * W + ix) * kBlock) : Vec{};
      }
    }
    for (int s = 0; s < 6; ++s) InputTransform6(d + s, 6, e + s, 6);          // B^T d, column by column
    for (int r = 0; r < 6; ++r) InputTransform6(e + r * 6, 1, d + r * 6, 1);  // (B^T d) B, row by row
    for (int xi = 0; xi < 36; ++xi) Store(v + xi * ld + cb * kBlock, d[xi]);
  }
}

// The products m[xi * ld] of one tile back into its 4x4 outputs, with bias, residual and Relu.
void WinogradF43Conv::OutputTile(const ConvPoolGeom& g, const float* m, int64_t ld, int64_t tile, const float* bias,
                                 const float* residual, bool relu, float* y) {
  const int64_t OH = g.OH, OW = g.OW, MB = g.M / kBlock;
  int64_t n, oy0, ox0;
  TileGrid(g).Locate(tile, &n, &oy0, &ox0);
  const Vec zero{};
  for (int64_t kb = 0; kb < MB; ++kb) {
    Vec p[36], e[24], o[16];
    for (int xi = 0; xi < 36; ++xi) p[xi] = Load(m + xi * ld + kb * kBlock);
    for (int j = 0; j < 6; ++j) OutputTransform6(p + j, 6, e + j, 6);          // A^T p: 4 rows of 6
    for (int i = 0; i < 4; ++i) OutputTransform6(e + i * 6, 1, o + i * 4, 1);  // (A^T p) A: 4x4
    const Vec b = bias ? Load(bias + kb * kBlock) : zero;
    const int64_t plane = (n * MB + kb) * OH * OW;
    for (int i = 0; i < 4 && oy0 + i < OH; ++i) {
      for (int j = 0; j < 4 && ox0 + j < OW; ++j) {
        const int64_t at = (plane + (oy0 + i) * OW + ox0 + j) * kBlock;
        Vec r = o[i * 4 + j] + b;
        if (residual) r += Load(residual + at);
        if (relu) r = r < zero ? zero : r;  // NaN stays NaN, as in the Relu operator
        Store(y + at, r);
      }
    }
  }
}

const WinogradF43Conv::Filter& WinogradF43Conv::Prepare(const Tensor& filter, int workers) {
  const int64_t M = filter.dim(0), C = filter.dim(1);
  return weight_.Get(filter, Layout{C, M}, FilterCache(),
                     [&] { return TransformFilter(filter.data<float>(), C, M, workers); });
}

int64_t WinogradF43Conv::FilterPreparations() { return FilterCache().Preparations(); }

void WinogradF43Conv::Run(const ConvPoolGeom& g, const float* x, const Tensor& filter, const float* bias,
                          const float* residual, bool relu, float* y, int workers) {
  const int64_t C = g.C, M = g.M, tiles = TileGrid(g).Count(g.N);
  const Filter& u = Prepare(filter, workers);
  // Tiles go through in chunks whose V and M fit kScratchBytes (at least 24 tiles, so that the
  // GEMMs' rows fill their register tiles): each chunk reads the transformed filter once, so the
  // chunks are as large as that allows. One scratch per thread, shared by every such convolution it runs.
  constexpr int64_t kScratchBytes = 8 << 20;
  const int64_t chunk = std::min(tiles, std::max<int64_t>(24, kScratchBytes / (36 * (C + M) * int64_t{sizeof(float)})));
  thread_local std::vector<float> scratch;
  scratch.resize(static_cast<size_t>(36 * chunk * (C + M)));
  float* v = scratch.data();       // 36 x [chunk, C]
  float* m = v + 36 * chunk * C;   // 36 x [chunk, M]
  for (int64_t t0 = 0; t0 < tiles; t0 += chunk) {
    const int64_t nt = std::min(chunk, tiles - t0);
    math::ParallelFor(nt, workers, [&](int64_t t, int) { InputTile(g, x, t0 + t, v + t * C, chunk * C); });
    // One GEMM per position: [nt, C] x [C, M].
    math::ParallelFor(36, workers, [&](int64_t xi, int) {
      cpu_gemm::GemmPacked(nt, v + xi * chunk * C, C, *u.u[xi], nullptr, false, m + xi * chunk * M, M, 1);
    });
    math::ParallelFor(nt, workers,
                      [&](int64_t t, int) { OutputTile(g, m + t * M, chunk * M, t0 + t, bias, residual, relu, y); });
  }
}

}  // namespace hetnet
