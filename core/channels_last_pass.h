// Channels-last activations for convolution chains of inference nets (issue 16): run on the result
// of the fusions (core/inference_fusion.h), before reduced precision (core/reduced_precision.h).
//
// Why: the DNNL engine's Conv runs on NHWC activations; on NCHW blobs it reorders X in and Y out on
// every run (ResNet-18 at batch 1: 42 reorders, 2.8 of 29 ms). On a GPU, in float16 nets only,
// cuDNN's tensor-core kernels want NHWC too. Here the activations between such convolutions stay
// NHWC: a Conv on the DNNL engine (CPU) or the CUDNN engine (GPU, symmetric pads) gets
// `activation_order: "NHWC"` (filter still [M, C/group, kH, kW]), MaxPool / AveragePool on the CPU
// or on the CUDNN engine Caffe2's `order: "NHWC"`, and elementwise ops whose every input is
// channels-last (Relu, Sigmoid, Tanh, Add, Sum, Mul, Sub, Div without the legacy `broadcast`
// argument: all such inputs are 4-D and permuted alike, so numpy broadcasting is unchanged) simply
// run on the NHWC blobs. A channels-last value lives in a new blob `<name>_nhwc`; an NCHW2NHWC op
// (on the GPU for a GPU op, else on the CPU) makes one where a region starts, and an NHWC2NCHW op
// writes the original blob back before any other reader, and at the end of the net for an external
// output, a blob another net reads, or one this net reads before writing it (next run's input).
// Blobs only used inside a region are no longer written under their own names (like the other
// rewrites' dropped intermediates). Only applied when there are fewer order switches than twice the
// converted convolutions (each conversion saves that Conv's two reorders; a lone Conv between NCHW
// ops gains nothing). The walk is the blob-form engine's (core/blob_form_pass.h), shared with
// reduced precision.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

struct ChannelsLastInput {
  const caffe2::NetDef* net;                 // device option and external inputs / outputs
  std::vector<caffe2::OperatorDef>* ops;     // rewritten in place
  std::vector<std::string>* op_notes;        // one per op, kept aligned
  std::set<std::string> keep;                // blobs whose NCHW value must be there after a run
  std::set<std::string> taken;               // names in use (in this net, other nets, external)
};

// Rewrites *in.ops when worthwhile; returns the log lines (empty when nothing changed).
std::vector<std::string> ConvertToChannelsLast(ChannelsLastInput in);

}  // namespace hetnet
