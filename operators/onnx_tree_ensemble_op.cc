#include "operators/onnx_tree_ensemble_op.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/gradient.h"
#include "operators/half_compute.h"

namespace hetnet {

namespace {

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = t.dtype() == DataType::Double ? t.data<double>()[i] : static_cast<double>(t.data<float>()[i]);
  return v;
}

}  // namespace

OnnxTreeEnsembleOp::OnnxTreeEnsembleOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      features_(GetRepeatedArgument<int64_t>("nodes_featureids")),
      modes_(GetRepeatedArgument<int64_t>("nodes_modes")),
      true_ids_(GetRepeatedArgument<int64_t>("nodes_truenodeids")),
      true_leaf_(GetRepeatedArgument<int64_t>("nodes_trueleafs")),
      false_ids_(GetRepeatedArgument<int64_t>("nodes_falsenodeids")),
      false_leaf_(GetRepeatedArgument<int64_t>("nodes_falseleafs")),
      missing_true_(GetRepeatedArgument<int64_t>("nodes_missing_value_tracks_true")),
      leaf_targets_(GetRepeatedArgument<int64_t>("leaf_targetids")),
      roots_(GetRepeatedArgument<int64_t>("tree_roots")),
      aggregate_(GetSingleArgument<int64_t>("aggregate_function", 1)),
      n_targets_(GetSingleArgument<int64_t>("n_targets", 0)) {
  const size_t n = features_.size();
  const std::string me = type() + " '" + def.name() + "'";
  for (const auto* v : {&modes_, &true_ids_, &true_leaf_, &false_ids_, &false_leaf_})
    HN_CHECK_KIND(kInvalidArgument, v->size() == n, me, ": the nodes_* arguments must all have ", n, " entries");
  HN_CHECK_KIND(kInvalidArgument, missing_true_.empty() || missing_true_.size() == n, me,
                ": nodes_missing_value_tracks_true must have ", n, " entries or none");
  HN_CHECK_KIND(kInvalidArgument, aggregate_ >= 0 && aggregate_ <= 3, me, ": aggregate_function ", aggregate_,
                " is not 0 (average), 1 (sum), 2 (min) or 3 (max)");
  HN_CHECK_KIND(kInvalidArgument, n_targets_ > 0 && n_targets_ <= (int64_t{1} << 24), me, ": n_targets ", n_targets_,
                " must be in [1, 2^24]");
  HN_CHECK_KIND(kUnsupported, GetSingleArgument<int64_t>("post_transform", 0) == 0, me,
                ": post_transform other than 0 (none) is not supported");
  for (int64_t t : leaf_targets_)
    HN_CHECK_KIND(kInvalidArgument, t >= 0 && t < n_targets_, me, ": leaf target ", t, " is outside [0, n_targets)");
  for (int64_t m : modes_) HN_CHECK_KIND(kInvalidArgument, m >= 0 && m <= 6, me, ": node mode ", m, " is not in [0, 6]");
}

void OnnxTreeEnsembleOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const std::string me = type() + " '" + def().name() + "'";
  HN_CHECK_KIND(kInvalidArgument, X.ndim() == 2, me, ": X ('", def().input(0), "') must be [N, F], got ",
                ShapeToString(X.shape()));
  const std::vector<double> splits = AsDoubles(Input(1)), weights = AsDoubles(Input(2));
  const std::vector<double> members = InputSize() > 3 ? AsDoubles(Input(3)) : std::vector<double>{};
  const size_t n_nodes = features_.size();
  HN_CHECK_KIND(kInvalidArgument, splits.size() == n_nodes && weights.size() == leaf_targets_.size(), me, ": ",
                splits.size(), " splits for ", n_nodes, " nodes, ", weights.size(), " leaf weights for ",
                leaf_targets_.size(), " leaves");
  // Each member node's set: the next NaN-terminated run of membership_values, in node order.
  std::vector<std::vector<double>> sets(n_nodes);
  size_t at = 0;
  for (size_t k = 0; k < n_nodes; ++k) {
    if (modes_[k] != 6) continue;
    for (; at < members.size() && !std::isnan(members[at]); ++at) sets[k].push_back(members[at]);
    HN_CHECK_KIND(kInvalidArgument, at < members.size(), me, ": membership_values ends before the set of node ", k);
    ++at;
  }
  const int64_t N = X.dim(0), F = X.dim(1);
  for (int64_t f : features_)
    HN_CHECK_KIND(kInvalidArgument, f >= 0 && f < F, me, ": feature id ", f, " is outside [0, ", F, ")");
  DispatchFloat32Or64(*this, {0}, [&](auto zero) {
    using T = decltype(zero);
    const T* x = X.data<T>();
    T* y = Output(0, {N, n_targets_}, X.dtype())->template mutable_data<T>();
    const double init = aggregate_ == 2   ? static_cast<double>(std::numeric_limits<T>::max())
                        : aggregate_ == 3 ? static_cast<double>(std::numeric_limits<T>::lowest())
                                          : 0.0;
    std::vector<double> acc(static_cast<size_t>(n_targets_));
    for (int64_t r = 0; r < N; ++r) {
      std::fill(acc.begin(), acc.end(), init);
      for (int64_t root : roots_) {
        int64_t node = root;
        bool leaf = false;
        HN_CHECK_KIND(kInvalidArgument, root >= 0 && static_cast<size_t>(root) < n_nodes, me, ": tree root ", root,
                      " is not a node");
        // A root whose branches are the same leaf is that leaf (ONNX's degenerate tree).
        if (true_leaf_[root] && false_leaf_[root] && true_ids_[root] == false_ids_[root]) node = true_ids_[root], leaf = true;
        for (size_t steps = 0; !leaf; ++steps) {
          HN_CHECK_KIND(kInvalidArgument, steps <= n_nodes, me, ": the tree at root ", root,
                        " has a cycle (a walk longer than its ", n_nodes, " nodes)");
          const double v = x[r * F + features_[node]], s = splits[node];
          bool go;
          switch (modes_[node]) {
            case 0: go = v <= s; break;
            case 1: go = v < s; break;
            case 2: go = v >= s; break;
            case 3: go = v > s; break;
            case 4: go = v == s; break;
            case 5: go = v != s; break;
            default: go = std::find(sets[node].begin(), sets[node].end(), v) != sets[node].end();
          }
          go = go || (!missing_true_.empty() && missing_true_[node] && std::isnan(v));
          leaf = go ? true_leaf_[node] != 0 : false_leaf_[node] != 0;
          node = go ? true_ids_[node] : false_ids_[node];
          const size_t bound = leaf ? weights.size() : n_nodes;
          HN_CHECK_KIND(kInvalidArgument, node >= 0 && static_cast<size_t>(node) < bound, me, ": ",
                        leaf ? "leaf" : "node", " id ", node, " is out of range");
        }
        HN_CHECK_KIND(kInvalidArgument, node >= 0 && static_cast<size_t>(node) < weights.size(), me, ": leaf id ",
                      node, " is out of range");
        const double w = weights[node];
        double& a = acc[static_cast<size_t>(leaf_targets_[node])];
        if (aggregate_ == 1) a += w;
        else if (aggregate_ == 0) a += w / static_cast<double>(roots_.size());
        else if (aggregate_ == 2) a = std::min(a, w);
        else a = std::max(a, w);
      }
      for (int64_t t = 0; t < n_targets_; ++t) y[r * n_targets_ + t] = static_cast<T>(acc[t]);
    }
  });
}

OPERATOR_SCHEMA(OnnxTreeEnsemble).NumInputs(3, 4).NumOutputs(1).SetDoc("ONNX-ML TreeEnsemble: see onnx_tree_ensemble_op.h");
REGISTER_CPU_OPERATOR(OnnxTreeEnsemble, OnnxTreeEnsembleOp);
NO_GRADIENT(OnnxTreeEnsemble);

}  // namespace hetnet
