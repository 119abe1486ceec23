#include "operators/conv_dnnl_parts.h"

#include <algorithm>

namespace hetnet {
namespace {

// Parts per thread. Images: 4, so that a thread descheduled mid-part holds back one small part, not
// half. Bands of rows: 1; each band is one primitive run that streams the whole filter and pays the
// kernel's set-up, and 4 bands per thread left ResNet-50's 28x28 and 14x14 layers 10-15% slower at
// 2 threads (batch 1, conv time 32.3 -> 30.9 ms; ResNet-18 12.3 -> 11.4), while with the other core
// busy the run took as long either way (ResNet-18 26.6-27.6 ms).
constexpr int64_t kImagePartsPerWorker = 4;
constexpr int64_t kRowPartsPerWorker = 1;
// Channel parts each read the whole input: 2 per thread measured 6% faster than 4 on ResNet-50's
// 14x14 and 7x7 stages at 2 threads (and as fast as 1).
constexpr int64_t kChannelPartsPerWorker = 2;

}  // namespace

double ConvMacs(const ConvPoolGeom& g) {
  return static_cast<double>(g.N) * g.M * g.OH * g.OW * (g.C / g.group) * g.kh * g.kw;
}

ConvPartition ConvPartition::For(const ConvPoolGeom& g, int workers) {
  ConvPartition c;
  if (workers <= 1 || ConvMacs(g) < kMinConvPartsMacs) return c;
  if (g.channel_block && g.group == 1 && g.N < workers) {  // each image's output channels, 16 or more each
    c.split = kImageChannels;
    c.extent = g.M / 16;
    c.per_image = std::max<int64_t>(1, std::min<int64_t>((kChannelPartsPerWorker * workers + g.N - 1) / g.N, c.extent / 2));
    c.parts = g.N * c.per_image;
    return c;
  }
  if (g.channels_last && g.N < workers) {
    const double filter = static_cast<double>(g.M) * (g.C / g.group) * g.kh * g.kw;
    // Channel parts copy their outputs (and a residual) once more: worth it where the filter is
    // over twice the output (measured on ResNet-50's stages at 2 threads). Fewer than 4 blocks of
    // 16 channels make no two parts: bands then (LeNet's conv2, 50 channels, ran on oneDNN's OpenMP
    // team, whose threads then spun on the core the next operator's pool wanted: LeNet at batch 1,
    // 2 threads, FC 29 us instead of 13).
    c.split = g.group == 1 && g.M >= 64 && filter > 2.0 * g.N * g.OH * g.OW * g.M ? kChannels : kRows;
  }
  // Channel parts: whole multiples of 16 channels (the kernels' block), 32 at least.
  c.extent = c.split == kImages ? g.N : c.split == kRows ? g.OH : g.M / 16;
  const int64_t per_worker = c.split == kChannels ? kChannelPartsPerWorker
                             : c.split == kRows   ? kRowPartsPerWorker
                                                  : kImagePartsPerWorker;
  // Bands are of one image each (a band of rows across images is not one dense tensor; a 16-core
  // host ran 4 channels-last images as 4-image bands and wrote garbage): each image is cut into
  // per_image bands, part i is band i % per_image of image i / per_image.
  if (c.split == kRows) {
    c.per_image = std::max<int64_t>(1, std::min<int64_t>((per_worker * workers + g.N - 1) / g.N, c.extent / 2));
    c.parts = g.N * c.per_image;
  } else {
    c.parts = std::min<int64_t>(per_worker * workers, c.split == kImages ? c.extent : c.extent / 2);
  }
  c.parts = std::max<int64_t>(c.parts, 1);
  return c;
}

int64_t ConvPartition::Bound(int64_t i) const {
  return split == kImageChannels ? 16 * (extent * (i % per_image) / per_image)
         : split == kChannels    ? 16 * (extent * i / parts)
         : split == kRows   ? extent * (i % per_image) / per_image
                            : extent * i / parts;
}

ConvPoolGeom ConvPartition::PartGeom(const ConvPoolGeom& g, int64_t i, int64_t* in_row) const {
  ConvPoolGeom p = g;
  *in_row = 0;
  if (split == kImages) {
    p.N = Bound(i + 1) - Bound(i);
  } else if (split == kChannels) {
    p.M = (i + 1 == parts ? g.M : Bound(i + 1)) - Bound(i);  // the last takes the rest
  } else if (split == kImageChannels) {
    p.N = 1;
    p.M = (i % per_image + 1 == per_image ? g.M : Bound(i + 1)) - Bound(i);  // an image's last takes the rest
  } else {
    p.N = 1;
    const int64_t o0 = Bound(i), o1 = extent * (i % per_image + 1) / per_image;
    const int64_t dk = static_cast<int64_t>(g.dh) * (g.kh - 1) + 1;
    const int64_t first = o0 * g.sh - g.pt, end = (o1 - 1) * g.sh - g.pt + dk;  // input rows read
    *in_row = std::max<int64_t>(0, first);
    const int64_t in_end = std::min<int64_t>(g.H, end);
    p.pt = static_cast<int>(*in_row - first);
    p.pb = static_cast<int>(end - in_end);
    p.H = in_end - *in_row;
    p.OH = o1 - o0;
  }
  return p;
}

int64_t ConvPartition::SrcOffset(const ConvPoolGeom& g, int64_t i, int64_t in_row) const {
  return split == kImages           ? Bound(i) * g.C * g.H * g.W
         : split == kRows           ? (ImageOf(i) * g.H + in_row) * g.W * g.C
         : split == kImageChannels ? ImageOf(i) * g.C * g.H * g.W
                                    : 0;
}

int64_t ConvPartition::DstOffset(const ConvPoolGeom& g, int64_t i) const {
  if (split == kImageChannels) return (ImageOf(i) * g.M + Bound(i)) * g.OH * g.OW;  // blocked: a dense slice
  return split == kImages ? Bound(i) * g.M * g.OH * g.OW : (ImageOf(i) * g.OH + Bound(i)) * g.OW * g.M;
}

}  // namespace hetnet
