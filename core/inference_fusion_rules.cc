// The inference rewriter's fusion rules: BN folded into Conv/FC, Relu and residual Add fused into
// Conv/FC (core/inference_fusion.h states them; core/inference_fusion_rewriter.h is the rewriter).
#include "core/inference_fusion_rewriter.h"
#include "core/reduced_precision.h"

#include "core/operator.h"

namespace hetnet {
namespace inference_fusion {

bool Rewriter::TryFoldBN(int i, const BlobUses& uses) {
  const auto& p = ops_[i];
  const bool conv = p.type() == "Conv" && (p.input_size() == 2 || p.input_size() == 3);
  const bool fc = p.type() == "FC" && p.input_size() == 3 && IntArg(p, "axis", 1) == 1;
  if (!conv && !fc) return false;
  ArgumentHelper pargs(p);
  if (pargs.GetSingleArgument<std::string>("order", "NCHW") != "NCHW" || pargs.HasArgument("fused_activation"))
    return false;
  const int j = SoleConsumer(i, uses, {"SpatialBN"});
  if (j < 0) return false;
  const auto& bn = ops_[j];
  ArgumentHelper bargs(bn);
  if (bn.input_size() != 5 || bargs.GetSingleArgument<int>("is_test", 0) == 0 ||
      bargs.GetSingleArgument<std::string>("order", "NCHW") != "NCHW")
    return false;
  // W may be in the net's reduced precision already (a Predictor's weights, core/reduced_precision.h).
  const Tensor* W = Constant(p.input(1), uses, NetPrecision(def_));
  const Tensor* B = p.input_size() == 3 ? Constant(p.input(2), uses) : nullptr;
  if (!W || (p.input_size() == 3 && !B) || W->ndim() < 2) return false;
  // The fold runs where the weights are: on the CPU, or on the op's GPU (weights an init net put
  // there), with every statistic on that device too (no copy per run).
  Device op_device;
  const Device fold_device = W->device();
  if (!DeviceOf(p, &op_device) || (!fold_device.is_cpu() && !(fold_device == op_device)) ||
      (B && !(B->device() == fold_device)))
    return false;
  int64_t channels = W->dim(0);
  if (fc) {  // W is [N, K] flattened at axis_w
    const int64_t axis_w = pargs.GetSingleArgument<int>("axis_w", 1);
    if (axis_w < 1 || axis_w >= W->ndim()) return false;
    for (int64_t d = 1; d < axis_w; ++d) channels *= W->dim(d);
  }
  if (channels <= 0 || (B && B->numel() != channels)) return false;
  const Tensor* stats[4];
  for (int k = 0; k < 4; ++k) {
    stats[k] = Constant(bn.input(k + 1), uses);
    if (!stats[k] || stats[k]->ndim() != 1 || stats[k]->numel() != channels || !(stats[k]->device() == fold_device))
      return false;
  }
  const double eps = bargs.GetSingleArgument<float>("epsilon", 1e-5f);
  const std::string w_name = FreshName(p.input(1) + "_bn_folded", uses);
  const std::string b_name = FreshName((B ? p.input(2) : p.input(1)) + "_bn_folded_bias", uses);
  // The fold is an op of the net, run before the Conv/FC: it folds again whenever a weight or a
  // statistic changes (fed, trained, replaced for one Predictor run), so the rewrite never serves
  // stale weights; unchanged, it costs a few comparisons per run.
  caffe2::OperatorDef fold;
  fold.set_type("FoldBatchNormWeights");
  fold.set_name(p.name().empty() ? "" : p.name() + "_bn_fold");
  for (const std::string& in : {p.input(1), bn.input(1), bn.input(2), bn.input(3), bn.input(4)}) fold.add_input(in);
  if (B) fold.add_input(p.input(2));
  fold.add_output(w_name);
  fold.add_output(b_name);
  DeviceToOption(fold_device, fold.mutable_device_option());
  auto* a = fold.add_arg();
  a->set_name("epsilon");
  a->set_f(static_cast<float>(eps));
  if (fc) {
    a = fold.add_arg();
    a->set_name("axis_w");
    a->set_i(pargs.GetSingleArgument<int>("axis_w", 1));
  }
  before_[i].push_back(std::move(fold));
  caffe2::OperatorDef fused = p;
  fused.set_input(1, w_name);
  if (fused.input_size() == 3) fused.set_input(2, b_name); else fused.add_input(b_name);
  fused.set_output(0, bn.output(0));
  Record(i, j, std::move(fused), "SpatialBN " + Label(j) + " folded into " + p.type() + " " + Label(i) + " (" +
                                     w_name + ", " + b_name + ")",
         "BN folded");
  return true;
}

bool Rewriter::TryFuseRelu(int i, const BlobUses& uses) {
  const auto& p = ops_[i];
  const bool fc = p.type() == "FC" || p.type() == "FCTransposed";
  if ((p.type() != "Conv" && !fc) || ArgumentHelper(p).HasArgument("fused_activation")) return false;
  Device d;
  if (!DeviceOf(p, &d)) return false;
  const auto& engines = EnginesWithFusedActivation();
  if (!engines.count(ResolveEngine(p, d)) || (!d.is_cpu() && !engines.count(ResolveEngine(p, Device::CPU()))))
    return false;
  const int j = SoleConsumer(i, uses, {"Relu"});
  if (j < 0 || ops_[j].input_size() != 1) return false;
  caffe2::OperatorDef fused = p;
  fused.set_output(0, ops_[j].output(0));
  auto* arg = fused.add_arg();
  arg->set_name("fused_activation");
  arg->set_s("Relu");
  Record(i, j, std::move(fused), "Relu " + Label(j) + " fused into " + p.type() + " " + Label(i), "Relu fused");
  return true;
}

// Conv (DNNL on the CPU or CUDNN on a GPU, with bias) whose output only an Add reads: the Add's
// other input R becomes the Conv's fourth input with fused_residual (a sum post-op, or cuDNN's z
// input; operators/conv_op.h), so ResNet's Conv + Add + Relu is one pass over the output (with the
// Relu fused next).
bool Rewriter::TryFuseResidual(int i, const BlobUses& uses) {
  const auto& p = ops_[i];
  const ArgumentHelper a(p);
  Device d;
  if (p.type() != "Conv" || p.input_size() != 3 || a.HasArgument("fused_activation") ||
      a.HasArgument("fused_residual") || !DeviceOf(p, &d) || ResolveEngine(p, d) != (d.is_cpu() ? "DNNL" : "CUDNN"))
    return false;
  const int j = SoleConsumer(i, uses, {"Add", "Sum"}, /*any_input=*/true);
  if (j < 0 || ops_[j].input_size() != 2 || ArgumentHelper(ops_[j]).HasArgument("broadcast")) return false;
  const std::string& R = ops_[j].input(ops_[j].input(0) == p.output(0) ? 1 : 0);
  const std::string& Z = ops_[j].output(0);
  // R's value at the Conv must be the one the Add read; the Conv must not overwrite R.
  if (uses.WrittenBetween(R, i, j) || R == Z) return false;
  caffe2::OperatorDef fused = p;
  fused.add_input(R);
  fused.set_output(0, Z);
  auto* arg = fused.add_arg();
  arg->set_name("fused_residual");
  arg->set_i(1);
  if (d.is_cpu() && ResidualDiesAt(R, i, j, uses)) {  // (the DNNL Conv's storage reuse)
    arg = fused.add_arg();
    arg->set_name("fused_residual_reuse");
    arg->set_i(1);
  }
  Record(i, j, std::move(fused), ops_[j].type() + " " + Label(j) + " fused into Conv " + Label(i) + " (residual '" + R + "')",
         "residual add fused");
  return true;
}

// Whether the fused Conv at i may write its output into R's storage (fused_residual_reuse): R is
// this net's own (no input, output or other net's blob), written once before i, and read only by
// the Add at j and by ops before i whose results i waits for (so no executor runs them after it).
bool Rewriter::ResidualDiesAt(const std::string& R, int i, int j, const BlobUses& uses) const {
  if (protected_.count(R) || external_in_.count(R) || other_reads_.count(R) || other_writes_.count(R)) return false;
  const auto& w = uses.Writers(R);
  if (w.size() != 1 || w[0] >= i) return false;
  for (int r : uses.Readers(R))
    if (r != j && (r >= i || !DependsOn(i, r, uses))) return false;
  return true;
}

// Whether op i reads, directly or through other ops, an output of op r < i (each input's value
// comes from its last writer before the reader).
bool Rewriter::DependsOn(int i, int r, const BlobUses& uses) const {
  std::vector<int> stack{i};
  std::set<int> seen{i};
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    for (const auto& n : ops_[k].input()) {
      const auto& ws = uses.Writers(n);
      auto it = std::lower_bound(ws.begin(), ws.end(), k);
      if (it == ws.begin()) continue;
      const int w = *--it;
      if (w == r) return true;
      if (w > r && seen.insert(w).second) stack.push_back(w);
    }
  }
  return false;
}

}  // namespace inference_fusion
}  // namespace hetnet
