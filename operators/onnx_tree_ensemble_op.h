// OnnxTreeEnsemble(X, splits, leaf_weights, [membership_values]) -> Y: ONNX-ML's TreeEnsemble
// (opset 5). X is [N, F] float32/float64; each tree (roots: arg tree_roots) walks interior nodes
// (args nodes_featureids, nodes_modes: 0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=, 6 member of the next
// NaN-terminated run of membership_values; nodes_truenodeids / nodes_trueleafs and the false pair;
// nodes_missing_value_tracks_true sends NaN features the true way) to a leaf (leaf_targetids,
// leaf_weights). Y[n, target] aggregates the trees' leaves (aggregate_function 0 average, 1 sum,
// 2 min, 3 max; n_targets columns), in X's dtype. post_transform other than 0 (none) is refused.
// A walk longer than the number of nodes (a cycle) and out-of-range ids are errors naming the op.
// CPU only; no gradient.
#pragma once

#include <set>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class OnnxTreeEnsembleOp final : public Operator<CPUContext> {
 public:
  OnnxTreeEnsembleOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::vector<int64_t> features_, modes_, true_ids_, true_leaf_, false_ids_, false_leaf_, missing_true_;
  std::vector<int64_t> leaf_targets_, roots_;
  int64_t aggregate_, n_targets_;
};

}  // namespace hetnet
