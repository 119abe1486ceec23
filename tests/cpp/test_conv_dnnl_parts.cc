// The DNNL Conv's cuts into parts (operators/conv_dnnl_parts.h), as arithmetic: every output image,
// row or channel belongs to exactly one part, each band reads only rows inside the input and its pads
// give back its own output rows, and channel parts are whole 16-channel blocks (blocked
// activations: dense slices of one image each).
#include <catch2/catch.hpp>

#include <vector>

#include "operators/conv_dnnl_parts.h"

namespace hetnet {
namespace {

ConvPoolGeom Geom(int64_t n, int64_t c, int64_t hw, int64_t m, int k, int stride, int pad, bool channels_last) {
  ConvPoolGeom g;
  g.N = n;
  g.C = c;
  g.H = g.W = hw;
  g.M = m;
  g.kh = g.kw = k;
  g.sh = g.sw = stride;
  g.pt = g.pb = g.pl = g.pr = pad;
  g.OH = g.OW = (hw + 2 * pad - k) / stride + 1;
  g.channels_last = channels_last;
  return g;
}

// Checks the cut's invariants; returns it.
ConvPartition CheckCut(const ConvPoolGeom& g, int workers) {
  const ConvPartition cut = ConvPartition::For(g, workers);
  INFO("N " << g.N << " C " << g.C << " H " << g.H << " M " << g.M << " k " << g.kh << " stride " << g.sh
            << " workers " << workers << " split " << cut.split << " parts " << cut.parts);
  if (cut.parts <= 1) return cut;
  CHECK(cut.parts <= 4 * workers);
  if (cut.split == ConvPartition::kImages) {
    int64_t images = 0;
    for (int64_t i = 0; i < cut.parts; ++i) {
      int64_t in_row = -1;
      const ConvPoolGeom p = cut.PartGeom(g, i, &in_row);
      CHECK(p.N >= 1);
      CHECK(cut.SrcOffset(g, i, in_row) == images * g.C * g.H * g.W);
      CHECK(cut.DstOffset(g, i) == images * g.M * g.OH * g.OW);
      images += p.N;
    }
    CHECK(images == g.N);
  } else if (cut.split == ConvPartition::kChannels) {
    int64_t channels = 0;
    for (int64_t i = 0; i < cut.parts; ++i) {
      int64_t in_row = -1;
      const ConvPoolGeom p = cut.PartGeom(g, i, &in_row);
      CHECK(cut.Bound(i) == channels);
      CHECK(cut.Bound(i) % 16 == 0);
      CHECK(p.M >= 16);
      channels += p.M;
    }
    CHECK(channels == g.M);
  } else if (cut.split == ConvPartition::kImageChannels) {
    REQUIRE(g.channel_block > 0);
    std::vector<int64_t> channels(g.N, 0);
    for (int64_t i = 0; i < cut.parts; ++i) {
      int64_t in_row = -1;
      const ConvPoolGeom p = cut.PartGeom(g, i, &in_row);
      const int64_t image = cut.ImageOf(i);
      REQUIRE(image < g.N);
      CHECK(p.N == 1);
      CHECK(cut.Bound(i) == channels[image]);  // slices follow each other
      CHECK(cut.Bound(i) % 16 == 0);
      CHECK(p.M % g.channel_block == 0);
      CHECK(cut.SrcOffset(g, i, in_row) == image * g.C * g.H * g.W);
      CHECK(cut.DstOffset(g, i) == (image * g.M + cut.Bound(i)) * g.OH * g.OW);  // the slice's place in Y
      channels[image] += p.M;
    }
    for (int64_t c : channels) CHECK(c == g.M);
  } else {
    REQUIRE(g.channels_last);
    std::vector<int64_t> rows(g.N, 0);
    for (int64_t i = 0; i < cut.parts; ++i) {
      int64_t in_row = -1;
      const ConvPoolGeom p = cut.PartGeom(g, i, &in_row);
      const int64_t image = cut.ImageOf(i);
      REQUIRE(image < g.N);
      CHECK(p.N == 1);
      CHECK(cut.Bound(i) == rows[image]);  // bands follow each other
      CHECK(in_row >= 0);
      CHECK(in_row + p.H <= g.H);
      CHECK(p.pt >= 0);
      CHECK(p.pb >= 0);
      CHECK((p.H + p.pt + p.pb - p.kh) / p.sh + 1 == p.OH);  // its pads give back its own rows
      CHECK(cut.Bound(i) * g.sh - g.pt == in_row - p.pt);    // and the first of them is its own
      CHECK(cut.SrcOffset(g, i, in_row) == (image * g.H + in_row) * g.W * g.C);
      CHECK(cut.DstOffset(g, i) == (image * g.OH + cut.Bound(i)) * g.OW * g.M);
      rows[image] += p.OH;
    }
    for (int64_t r : rows) CHECK(r == g.OH);
  }
  return cut;
}

}  // namespace

TEST_CASE("DNNL Conv parts: each image, row or channel in exactly one part", "[conv][dnnl_parts]") {
  // LeNet's conv1 (1/4 M multiply-adds) and conv2: bands of one image at 2 threads.
  const ConvPartition lenet1 = CheckCut(Geom(1, 1, 28, 20, 5, 1, 0, true), 2);
  CHECK(lenet1.split == ConvPartition::kRows);
  CHECK(lenet1.parts == 2);
  CHECK(CheckCut(Geom(1, 1, 28, 20, 5, 1, 0, true), 1).parts == 1);          // one worker: whole
  CHECK(CheckCut(Geom(1, 1, 12, 20, 5, 1, 0, true), 2).parts == 1);          // 64K: too small to cut
  CHECK(CheckCut(Geom(1, 20, 12, 50, 5, 1, 0, true), 2).split == ConvPartition::kRows);
  // ResNet's 7x7 stage at batch 1: the filter outweighs the output, channel parts.
  CHECK(CheckCut(Geom(1, 512, 7, 512, 3, 1, 1, true), 2).split == ConvPartition::kChannels);
  CHECK(CheckCut(Geom(4, 64, 20, 64, 1, 1, 0, false), 2).split == ConvPartition::kImages);
  for (int workers : {2, 3, 8, 16})
    for (int64_t n : {1, 2, 3, 5})
      for (int k : {1, 3, 7})
        for (int stride : {1, 2})
          for (bool channels_last : {true, false}) {
            CheckCut(Geom(n, 64, 30, 96, k, stride, k / 2, channels_last), workers);
            CheckCut(Geom(n, 16, 9, 64, k, stride, k / 2, channels_last), workers);
            CheckCut(Geom(n, 256, 6, 200, k, stride, k / 2, channels_last), workers);
          }
  // Blocked activations: images, or each image's output channels when there are fewer images.
  for (int block : {8, 16})
    for (int workers : {2, 3, 16})
      for (int64_t n : {1, 2, 5})
        for (int64_t m : {16, 64, 96, 520}) {
          if (m % block) continue;  // (the rewrite's condition)
          ConvPoolGeom g = Geom(n, 64, 14, m, 3, 1, 1, false);
          g.channel_block = block;
          const ConvPartition cut = CheckCut(g, workers);
          if (cut.parts > 1) CHECK(cut.split == (n >= workers ? ConvPartition::kImages : ConvPartition::kImageChannels));
        }
  ConvPoolGeom one = Geom(1, 512, 7, 512, 3, 1, 1, false);
  one.channel_block = 8;
  CHECK(CheckCut(one, 2).split == ConvPartition::kImageChannels);
  CHECK(CheckCut(one, 2).parts == 4);
}

}  // namespace hetnet
