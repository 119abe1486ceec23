// FoldBatchNormWeights: the weights of a Conv or FC with the inference-mode SpatialBN after it
// folded in, so that one op computes both (inserted by core/inference_fusion.cc):
//   alpha[c] = scale[c] / sqrt(var[c] + epsilon)
//   W_folded[c, ...] = W[c, ...] * alpha[c]
//   B_folded[c] = (B[c] - mean[c]) * alpha[c] + shift[c]      (B = 0 when the op had no bias)
// Inputs (W, scale, shift, mean, var[, B]); c runs over the product of W's dims before `axis_w`
// (1 for Conv; FC's axis_w). The op folds again only when an input may have changed since its last
// fold (another storage, a write generation, a shape, or storage hetnet does not own) or when
// something else wrote its outputs; otherwise a run costs a few comparisons. So weights fed or
// trained after the net was created are always folded in, unlike a fold done once at creation.
// `to` (bfloat16 / float16; the reduced-precision rewrite, core/reduced_precision.h, sets it) makes
// the outputs narrow: computed in float32 and rounded once, with no float32 copy kept; W may then be
// of that dtype too (a Predictor's weights converted in place: W rounded, then the folded product).
#pragma once

#include <vector>

#include "core/operator.h"
#include "operators/tensor_version.h"

namespace hetnet {

class FoldBatchNormWeightsOp final : public Operator<CPUContext> {
 public:
  FoldBatchNormWeightsOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool UpToDate();
  void Fold();

  double epsilon_;
  int axis_w_;
  DataType to_;  // the outputs' dtype (`to`: float32, or bfloat16 / float16 for reduced precision)
  std::vector<TensorVersion> inputs_seen_, outputs_seen_;
};

}  // namespace hetnet
