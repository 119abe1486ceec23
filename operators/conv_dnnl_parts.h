// How the DNNL Conv (operators/conv_op_dnnl.cc) cuts one convolution into parts for hetnet's
// intra-op pool: each part is a one-thread primitive of its own, computing some images, or (fewer
// channels-last images than threads) a band of output rows of one image from the input rows it
// reads, or (one channels-last image whose filter outweighs its output twice: ResNet's 14x14 and 7x7
// stages) some output channels from a slice of the filter. Every part's tensors stay dense: oneDNN
// 2.6 runs a convolution with a strided (channel-sliced) output on its reference kernel, 100x slower.
// Blocked activations (nChw8c / nChw16c) are cut into images, or (fewer images than threads) into
// output channels of one image each: a channel slice of one blocked image is dense, so those parts
// write Y in place.
// Pure arithmetic on the geometry, so that the cuts can be read (and tested) apart from oneDNN.
#pragma once

#include <cstdint>

#include "operators/conv_pool_shape.h"

namespace hetnet {

// Below this many multiply-adds a convolution runs as one primitive on one thread. LeNet's conv1
// (288K, one input channel, a kernel at ~45 GFLOP/s) gains from two bands: batch 1 at 2 threads
// 78 -> 74 us per run.
constexpr double kMinConvPartsMacs = 1 << 18;

double ConvMacs(const ConvPoolGeom& g);

struct ConvPartition {
  enum Split { kImages, kRows, kChannels, kImageChannels };
  Split split = kImages;
  int64_t parts = 1;      // 1: run whole
  int64_t per_image = 1;  // bands (kRows) or channel slices (kImageChannels) per image
  int64_t extent = 0;     // images, output rows of an image, or 16-channel blocks

  // The cut for `workers` threads; parts == 1 where one part would do (too small, one worker).
  static ConvPartition For(const ConvPoolGeom& g, int workers);

  // Part i's first image, output row (of its image) or output channel.
  int64_t Bound(int64_t i) const;
  // The image whose band or slice part i is (kRows, kImageChannels), else 0.
  int64_t ImageOf(int64_t i) const { return split == kRows || split == kImageChannels ? i / per_image : 0; }
  // Part i's own geometry: fewer images, rows (with its own top / bottom pads and input rows) or
  // output channels. *in_row: its first input row (kRows), else 0.
  ConvPoolGeom PartGeom(const ConvPoolGeom& g, int64_t i, int64_t* in_row) const;
  // Element offsets of part i's input in X and (not kChannels, whose parts write a dense buffer of
  // their own) of its output in Y.
  int64_t SrcOffset(const ConvPoolGeom& g, int64_t i, int64_t in_row) const;
  int64_t DstOffset(const ConvPoolGeom& g, int64_t i) const;
};

}  // namespace hetnet
