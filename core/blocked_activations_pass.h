// Blocked activations for CPU convolution chains of float32 inference nets (issue 16): tried before
// the channels-last pass (core/channels_last_pass.h), which runs where this one does not apply.
//
// Why: oneDNN's direct convolutions run faster on its blocked layout nChw8c (AVX2) / nChw16c
// (AVX-512) than on NHWC, where the pixels of a wide layer lie a power-of-two stride apart (2 KiB at
// 512 channels). Measured per layer on a Zen 3 host, one thread: ResNet-18's convolutions 41.4 ms
// NHWC, 39.0 ms blocked; at 2 threads (oneDNN's team) 22.9 and 20.4 ms (benchmarks/RESULTS.md).
//
// A blocked value keeps its NCHW shape (shape inference, memory plans and reports see NCHW) while
// its bytes are [N, C/b, H, W, b]; it lives in a new blob `<name>_blk`. Converted ops: a CPU Conv on
// the DNNL engine whose filter shape is known at rewrite time (a constant, or the filter folded by
// FoldBatchNormWeights) with output channels a multiple of b gets `activation_order: "NCHW<b>c"`;
// its X is taken blocked when its channels divide by b, else as it is (an image's 3 channels: the
// first layer writes blocked without a switch in front); a fused residual is blocked too. CPU
// MaxPool / AveragePool get `order: "NCHW<b>c"` and the one-input elementwise ops Relu, Sigmoid and
// Tanh run on blocked blobs unchanged, where their input is blocked already (two-input ones stay
// out: broadcasting is not the same on blocked bytes). NCHWToBlocked / BlockedToNCHW
// (operators/blocked_layout_ops.h) switch at region borders, as the channels-last pass's switches
// do, under the same worth-it rule. Only float32 nets (reduced precision keeps the channels-last pass).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

struct BlockedActivationsInput {
  const caffe2::NetDef* net;              // device option, precision, external inputs / outputs
  std::vector<caffe2::OperatorDef>* ops;  // rewritten in place
  std::vector<std::string>* op_notes;     // one per op, kept aligned
  std::set<std::string> keep;             // blobs whose NCHW value must be there after a run
  std::set<std::string> taken;            // names in use (in this net, other nets, external)
  int block = 8;                          // 8 or 16 channels
  // The shape of a filter blob as it will be at run time; empty when not known.
  std::function<std::vector<int64_t>(const std::string&)> filter_shape;
};

// The block oneDNN's direct convolutions use on this CPU: 16 with AVX-512F, else 8.
int DefaultChannelBlock();

// Rewrites *in.ops when worthwhile; returns the log lines (empty when nothing changed).
std::vector<std::string> ConvertToBlockedActivations(BlockedActivationsInput in);

}  // namespace hetnet
