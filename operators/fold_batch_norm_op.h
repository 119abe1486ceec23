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
#pragma once

#include <cstdint>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class FoldBatchNormWeightsOp final : public Operator<CPUContext> {
 public:
  FoldBatchNormWeightsOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  struct Seen {
    uint64_t storage = 0, generation = 0;
    std::vector<int64_t> shape;
  };
  static Seen Of(const Tensor& t) { return {t.storage_id(), t.write_generation(), t.shape()}; }
  static bool Same(const Seen& a, const Seen& b) {
    return a.storage != 0 && a.storage == b.storage && a.generation == b.generation && a.shape == b.shape;
  }
  bool UpToDate();
  void Fold();

  double epsilon_;
  int axis_w_;
  std::vector<Seen> inputs_seen_, outputs_seen_;
};

}  // namespace hetnet
