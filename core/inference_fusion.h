// Graph rewrites of inference nets at net creation (issue 16 item 3), run by CreateNetFromDef
// before placement, so that the placement report and the running net are the rewritten net:
//   * SpatialBN (is_test=1) folded into the Conv / FC that feeds it: a FoldBatchNormWeights op
//     (operators/fold_batch_norm_op.h) inserted before the Conv / FC writes the scaled filter and
//     bias into NEW blobs (`<W>_bn_folded`, `<bias or W>_bn_folded_bias`) that the Conv / FC reads;
//     the user's weight blobs are never modified. It folds again whenever a weight or statistic
//     changes (a write generation), so weights fed or trained after creation are seen. On the CPU
//     it folds when the net is created, and the instances of a net over the same weights (a
//     Predictor's) share one fold (operators/fold_batch_norm_op.h). The pass
//     folds only where every weight, scale, bias, mean and var is a float32 tensor already in the
//     workspace at creation, written by no op of this net nor of any other net of the workspace,
//     all on the CPU or all on the Conv / FC's GPU (where the fold then runs).
//   * Conv / FC / FCTransposed followed by Relu: the op carries `fused_activation: "Relu"` and the
//     Relu is removed. Only where the op runs on an engine that honours the argument (the default
//     kernels of conv_op.h, fc_op.h, fc_transposed_op.h and the DNNL, PACKED and CUDNN engines:
//     see EnginesWithFusedActivation).
//   * FC / FCTransposed that would run on the DNNL engine run on PACKED (packed weights), first.
//   * Conv (CPU DNNL or GPU CUDNN, with bias) read only by an Add(Y, R): R becomes the Conv's fourth
//     input with fused_residual 1 (added in the convolution's output pass), before the Relu fusion;
//     on the CPU with fused_residual_reuse 1 too when no op reads R after the Conv (the DNNL Conv
//     then writes its output into R's storage instead of first copying R there).
//   * Channels-last activations between DNNL convolutions, and in float16 GPU nets between CUDNN
//     convolutions (core/channels_last_pass.h), then reduced precision, last.
//   * Dropout with is_test=1 removed: its readers read its input instead (in-place Dropout is
//     simply dropped). A Dropout whose output no later op reads (a result of the net, declared as
//     an external output or not) is kept.
//   * StopGradient (ONNX's Identity) or a same-device Copy of an intermediate blob X into Y removed:
//     X's one writer writes Y instead and X's readers read Y (Y written by nothing else and read
//     by no earlier op); X is then not in the workspace.
// Never rewritten: a blob that is a net external output or read by another net of the workspace,
// a blob read before the net writes it, ops on different devices, and training nets (any op type
// ending in "Gradient"/"Grad", an optimizer op, SpatialBN or Dropout with is_test=0): the pass
// leaves those nets exactly as they are. Which nets: those with the net argument `hetnet_optimize`
// = 1, which a Predictor (so `hetnet run` and `hetnet serve`) sets on its predict net unless the
// net says otherwise (RequestInferenceRewrite); a net made through the workspace API without the
// argument is not rewritten, so every blob Caffe2 would have written stays fetchable.
// hetnet_optimize=0, or DefaultInferenceFusionOptions().enabled = false (`hetnet run --no-optimize`,
// or HETNET_OPTIMIZE=0 in the environment when the process starts), turns it off.
// Blobs no longer written (a Conv's pre-Relu output, a Dropout's output) are not in the workspace
// after a run: fetch them by making them external outputs, or turn the pass off.
// Deterministic: the same net and workspace give the same rewrite and the same blob names.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/placement.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

struct InferenceFusionOptions {
  bool enabled = true;  // process-wide switch: `hetnet run --no-optimize`, HETNET_OPTIMIZE=0
  bool channels_last = true;  // the layout passes (channels-last and blocked); HETNET_CHANNELS_LAST=0
  // Blocked activations first where they apply (core/blocked_activations_pass.h);
  // HETNET_BLOCKED_ACTIVATIONS=0 leaves the channels-last pass alone.
  bool blocked_activations = true;
  int channel_block = 0;  // 8 or 16; 0: DefaultChannelBlock() (this CPU's)
};
InferenceFusionOptions& DefaultInferenceFusionOptions();

// Engines whose Conv / FC / FCTransposed kernels apply `fused_activation` ("" = the default
// kernels). Relu is fused only into an op whose engine (on its device, and on CPU for a GPU op,
// which soft placement may move there) is in this set.
const std::set<std::string>& EnginesWithFusedActivation();

struct InferenceRewrite {
  bool changed = false;
  caffe2::NetDef net;               // the rewritten net (== the input when !changed)
  std::vector<std::string> op_notes;  // per op of `net`: what was fused into it ("" for none)
  std::vector<std::string> notes;     // one line per rewrite, in order
  std::string skipped;                // why the pass did not run ("" when it ran)
};

// Sets hetnet_optimize=1 on the net unless it has the argument already.
void RequestInferenceRewrite(caffe2::NetDef* net);

// "" when def may be rewritten, else the reason (training op, is_test=0, hetnet_optimize=0, ...).
std::string InferenceRewriteBlocker(const caffe2::NetDef& def);

// Rewrites def against ws (the workspace the net is created in: weight values, other nets).
// Nothing in ws changes, so the same call previews the rewrite for reports.
InferenceRewrite RewriteForInference(const caffe2::NetDef& def, Workspace* ws);

// The `fused_activation` argument of a Conv / FC / FCTransposed kernel: true for "Relu", false when
// absent or ""; any other value is a kInvalidArgument error naming the op.
bool FusedReluArgument(const caffe2::OperatorDef& op);

// Appends the fusion notes to the reasons of the report's ops (the report of rewrite.net).
void AnnotatePlacement(const InferenceRewrite& rewrite, PlacementReport* report);

}  // namespace hetnet
