// Inference rewrites at net creation: BN folding, Relu fusion, test-mode Dropout removal, then
// channels-last activations (core/channels_last_pass.h)
// (core/inference_fusion.h states the rules).
#include "core/inference_fusion.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/argument.h"
#include "core/channels_last_pass.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {

InferenceFusionOptions& DefaultInferenceFusionOptions() {
  static InferenceFusionOptions opts = [] {
    InferenceFusionOptions o;
    const char* env = std::getenv("HETNET_OPTIMIZE");
    o.enabled = !(env && std::string(env) == "0");
    const char* cl = std::getenv("HETNET_CHANNELS_LAST");
    o.channels_last = !(cl && std::string(cl) == "0");
    return o;
  }();
  return opts;
}

const std::set<std::string>& EnginesWithFusedActivation() {
  // The default kernels, DNNL's (a oneDNN post-op, operators/conv_op_dnnl.cc, fc_op_dnnl.cc) and
  // PACKED's (in the GEMM's store, operators/fc_op_packed.cc) apply it; CUDNN's Conv does not read
  // it yet and would silently drop the Relu.
  static const std::set<std::string> engines = {"", "DNNL", "PACKED"};
  return engines;
}

namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
int IntArg(const caffe2::OperatorDef& op, const char* name, int dflt) {
  return ArgumentHelper(op).GetSingleArgument<int>(name, dflt);
}

// Readers and writers of every blob, as op indices (a reader once per input slot), ascending.
struct BlobUses {
  std::map<std::string, std::vector<int>> readers, writers;
  explicit BlobUses(const std::vector<caffe2::OperatorDef>& ops) {
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      for (const auto& n : ops[i].input()) readers[n].push_back(i);
      for (const auto& n : ops[i].output()) writers[n].push_back(i);
    }
  }
  const std::vector<int>& Readers(const std::string& n) const { return Get(readers, n); }
  const std::vector<int>& Writers(const std::string& n) const { return Get(writers, n); }
  // Whether an op strictly between a and b reads (or writes) n.
  bool ReadBetween(const std::string& n, int a, int b) const { return Any(Readers(n), a, b); }
  bool WrittenBetween(const std::string& n, int a, int b) const { return Any(Writers(n), a, b); }

 private:
  static const std::vector<int>& Get(const std::map<std::string, std::vector<int>>& m, const std::string& n) {
    static const std::vector<int> none;
    auto it = m.find(n);
    return it == m.end() ? none : it->second;
  }
  static bool Any(const std::vector<int>& v, int a, int b) {
    auto it = std::upper_bound(v.begin(), v.end(), a);
    return it != v.end() && *it < b;
  }
};

class Rewriter {
 public:
  Rewriter(const caffe2::NetDef& def, Workspace* ws) : def_(def), ws_(ws) {
    ops_.assign(def.op().begin(), def.op().end());
    notes_.assign(ops_.size(), "");
    protected_.insert(def.external_output().begin(), def.external_output().end());
    external_in_.insert(def.external_input().begin(), def.external_input().end());
    for (const auto& name : ws->Nets()) {
      if (NetBase* other = ws->GetNet(name)) {
        // The net being replaced counts too: it may still be running with its folded blobs.
        for (const auto& op : other->def().op()) {
          if (name != def.name()) protected_.insert(op.input().begin(), op.input().end());
          other_reads_.insert(op.input().begin(), op.input().end());
          other_writes_.insert(op.output().begin(), op.output().end());
        }
      }
    }
  }

  InferenceRewrite Run() {
    PreferPackedFC();
    Sweep(&Rewriter::TryFoldBN);
    Sweep(&Rewriter::TryRemoveDropout);
    Sweep(&Rewriter::TryFuseResidual);
    Sweep(&Rewriter::TryFuseRelu);
    if (DefaultInferenceFusionOptions().channels_last) {
      ChannelsLastInput cl{&def_, &ops_, &notes_, protected_, given_};
      for (const auto* names : {&external_in_, &other_reads_, &other_writes_, &protected_})
        cl.taken.insert(names->begin(), names->end());
      for (auto& line : ConvertToChannelsLast(std::move(cl))) log_.push_back(std::move(line));
    }
    InferenceRewrite r;
    r.net = def_;
    r.net.clear_op();
    for (const auto& op : ops_) *r.net.add_op() = op;
    r.changed = !log_.empty();
    r.op_notes = notes_;
    r.notes = log_;
    return r;
  }

 private:
  using Try = bool (Rewriter::*)(int i, const BlobUses& uses);
  // One pass over the ops with uses computed once (accepted rewrites of one kind never invalidate
  // each other's conditions), then the removed ops are dropped.
  void Sweep(Try fn) {
    BlobUses uses(ops_);
    dead_.assign(ops_.size(), false);
    bool any = false;
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i)
      if (!dead_[i]) any |= (this->*fn)(i, uses);
    if (!any) return;
    std::vector<caffe2::OperatorDef> ops;
    std::vector<std::string> notes;
    for (size_t i = 0; i < ops_.size(); ++i) {
      for (auto& op : before_[static_cast<int>(i)]) ops.push_back(std::move(op)), notes.push_back("");
      if (!dead_[i]) ops.push_back(std::move(ops_[i])), notes.push_back(std::move(notes_[i]));
    }
    before_.clear();
    ops_ = std::move(ops);
    notes_ = std::move(notes);
  }

  // FC / FCTransposed that would run on DNNL (unless named) get hetnet's PACKED engine (operators/fc_op_packed.cc):
  // faster, but only for weights that stay put, so only in inference nets. Training and workspace
  // nets keep DNNL, whose results a resumed training run reproduces bit for bit.
  void PreferPackedFC() {
    for (size_t i = 0; i < ops_.size(); ++i) {
      auto& op = ops_[i];
      Device d;
      if ((op.type() != "FC" && op.type() != "FCTransposed") || op.engine().find("DNNL") != std::string::npos ||
          !DeviceOf(op, &d) ||
          !d.is_cpu() || ResolveEngine(op, d) != "DNNL" || !OperatorRegistry::Find(op.type(), DeviceType::CPU, "PACKED"))
        continue;
      op.set_engine("PACKED");
      AddNote(static_cast<int>(i), "engine PACKED");
    }
  }

  bool DeviceOf(const caffe2::OperatorDef& op, Device* d) const {
    try {
      *d = DeviceFromOption(op.has_device_option() ? op.device_option() : def_.device_option());
      return true;
    } catch (const Error&) {
      return false;  // placement reports the bad device
    }
  }
  std::string Label(int i) const {
    return ops_[i].name().empty() ? "'" + ops_[i].output(0) + "'" : "'" + ops_[i].name() + "'";
  }

  // The single reader of op i's output Y is op j (input 0), which writes Z; moving Z's write from j
  // to i (and no longer writing Y) changes nothing any reader or the user can see.
  int SoleConsumer(int i, const BlobUses& uses, const std::set<std::string>& types, bool any_input = false) const {
    const auto& p = ops_[i];
    if (p.output_size() != 1) return -1;
    const std::string& Y = p.output(0);
    if (external_in_.count(Y)) return -1;
    const auto& readers = uses.Readers(Y);
    if (!readers.empty() && readers.front() <= i) return -1;  // read before written: last run's value
    const auto& w = uses.Writers(Y);
    auto next = std::upper_bound(w.begin(), w.end(), i);
    const int next_writer = next == w.end() ? INT_MAX : *next;
    int j = -1, slots = 0;
    for (int r : readers)
      if (r <= next_writer) j = r, ++slots;
    if (slots != 1 || dead_[j] || !types.count(ops_[j].type())) return -1;
    const auto& c = ops_[j];
    // (Y is read once: `slots`; with any_input it may be the consumer's second input.)
    if (c.input_size() < 1 || (c.input(0) != Y && !any_input) || c.output_size() != 1) return -1;
    if (next_writer != INT_MAX && next_writer < j) return -1;
    const std::string& Z = c.output(0);
    // A fetched blob must keep its value, unless the consumer overwrites it in place (then the
    // value seen after the run is the consumer's either way).
    if (protected_.count(Y) && Z != Y) return -1;
    if (uses.ReadBetween(Z, i, j) || uses.WrittenBetween(Z, i, j)) return -1;
    for (const auto& in : p.input())
      if (in == Z) return -1;
    Device dp, dc;
    if (!DeviceOf(p, &dp) || !DeviceOf(c, &dc) || !(dp == dc)) return -1;
    return j;
  }

  // A float32 CPU tensor in the workspace that no net writes (a constant from the init net).
  const Tensor* Constant(const std::string& name, const BlobUses& uses) const {
    if (!uses.Writers(name).empty() || other_writes_.count(name)) return nullptr;
    const Blob* b = ws_->GetBlob(name);
    if (!b || !b->IsTensor()) return nullptr;
    const Tensor& t = b->GetTensor();
    if (!t.initialized() || t.dtype() != DataType::Float || !t.device().is_cpu()) return nullptr;
    return &t;
  }

  bool TryFoldBN(int i, const BlobUses& uses) {
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
    const Tensor* W = Constant(p.input(1), uses);
    const Tensor* B = p.input_size() == 3 ? Constant(p.input(2), uses) : nullptr;
    if (!W || (p.input_size() == 3 && !B) || W->ndim() < 2) return false;
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
      if (!stats[k] || stats[k]->ndim() != 1 || stats[k]->numel() != channels) return false;
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
    DeviceToOption(Device::CPU(), fold.mutable_device_option());  // the weights are CPU tensors (Constant)
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

  // "<base>", else "<base>_1", ...: a name no net of the workspace reads (other than the one being
  // replaced), this net does not use, and this pass has not given out.
  std::string FreshName(const std::string& base, const BlobUses& uses) {
    for (int k = 0;; ++k) {
      std::string n = k ? base + "_" + std::to_string(k) : base;
      if (other_reads_.count(n) || uses.readers.count(n) || uses.writers.count(n) || external_in_.count(n) ||
          protected_.count(n) || !given_.insert(n).second)
        continue;
      return n;
    }
  }

  bool TryFuseRelu(int i, const BlobUses& uses) {
    const auto& p = ops_[i];
    const bool fc = p.type() == "FC" || p.type() == "FCTransposed";
    if ((p.type() != "Conv" && !fc) || ArgumentHelper(p).HasArgument("fused_activation")) return false;
    Device d;
    if (!DeviceOf(p, &d)) return false;
    const auto& engines = EnginesWithFusedActivation();
    if (!engines.count(ResolveEngine(p, d)) || (!d.is_cpu() && !engines.count(ResolveEngine(p, Device::CPU()))))
      return false;
    // FC's float16 path has no fused Relu: fuse only what is known to be float32.
    if (fc && p.input_size() > 1 && !given_.count(p.input(1))) {  // a BN-folded weight is float32
      const Blob* w = ws_->GetBlob(p.input(1));
      if (!w || !w->IsTensor() || w->GetTensor().dtype() != DataType::Float) return false;
    }
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

  // Conv (DNNL, with bias) whose output only an Add reads: the Add's other input R becomes the
  // Conv's fourth input with fused_residual (a sum post-op; operators/conv_op.h), so ResNet's
  // Conv + Add + Relu is one pass over the output (with the Relu fused next).
  bool TryFuseResidual(int i, const BlobUses& uses) {
    const auto& p = ops_[i];
    const ArgumentHelper a(p);
    Device d;
    if (p.type() != "Conv" || p.input_size() != 3 || a.HasArgument("fused_activation") ||
        a.HasArgument("fused_residual") || !DeviceOf(p, &d) || !d.is_cpu() || ResolveEngine(p, d) != "DNNL")
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
    if (ResidualDiesAt(R, i, j, uses)) {
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
  bool ResidualDiesAt(const std::string& R, int i, int j, const BlobUses& uses) const {
    if (protected_.count(R) || external_in_.count(R) || other_reads_.count(R) || other_writes_.count(R)) return false;
    const auto& w = uses.Writers(R);
    if (w.size() != 1 || w[0] >= i) return false;
    for (int r : uses.Readers(R))
      if (r != j && (r >= i || !DependsOn(i, r, uses))) return false;
    return true;
  }
  // Whether op i reads, directly or through other ops, an output of op r < i (each input's value
  // comes from its last writer before the reader).
  bool DependsOn(int i, int r, const BlobUses& uses) const {
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

  bool TryRemoveDropout(int j, const BlobUses& uses) {
    const auto& op = ops_[j];
    if (op.type() != "Dropout" || op.input_size() != 1 || op.output_size() != 1 || IntArg(op, "is_test", 0) == 0)
      return false;
    const std::string X = op.input(0), Y = op.output(0);
    std::string note = "Dropout " + Label(j) + " (is_test=1) removed";
    if (X != Y) {
      if (protected_.count(Y) || external_in_.count(Y) || uses.Writers(Y).size() != 1) return false;
      const auto& readers = uses.Readers(Y);
      // Unread afterwards: a result of the net the caller fetches (declared or not), kept.
      if (readers.empty() || readers.front() <= j) return false;
      const int last = readers.back();
      if (uses.WrittenBetween(X, j, last + 1)) return false;
      for (int r : readers) {
        for (int k = 0; k < ops_[r].input_size(); ++k)
          if (ops_[r].input(k) == Y) ops_[r].set_input(k, X);
        AddNote(r, "reads '" + X + "' (Dropout removed)");
      }
      note += ": its readers read '" + X + "'";
    }
    dead_[j] = true;
    log_.push_back(note);
    return true;
  }

  void Record(int i, int j, caffe2::OperatorDef fused, const std::string& log, const std::string& note) {
    ops_[i] = std::move(fused);
    dead_[j] = true;
    AddNote(i, note);
    log_.push_back(log);
  }
  void AddNote(int i, const std::string& s) { notes_[i] += (notes_[i].empty() ? "" : ", ") + s; }

  const caffe2::NetDef& def_;
  Workspace* ws_;
  std::vector<caffe2::OperatorDef> ops_;
  std::vector<std::string> notes_;
  std::vector<bool> dead_;
  std::vector<std::string> log_;
  std::map<int, std::vector<caffe2::OperatorDef>> before_;  // ops inserted before ops_[i] (the BN folds)
  std::set<std::string> protected_, external_in_, other_reads_, other_writes_, given_;
};

const std::set<std::string>& TrainingTypes() {
  static const std::set<std::string> t = {"Adagrad",      "SparseAdagrad", "Adam", "SparseAdam", "Iter",
                                          "AtomicIter",   "LearningRate",  "MomentumSGD", "MomentumSGDUpdate",
                                          "RmsProp",      "WeightedSum",   "SGD"};
  return t;
}

}  // namespace

std::string InferenceRewriteBlocker(const caffe2::NetDef& def) {
  if (!DefaultInferenceFusionOptions().enabled) return "turned off for the process (--no-optimize)";
  const int asked = ArgumentHelper(def).GetSingleArgument<int>("hetnet_optimize", -1);
  if (asked == 0) return "net argument hetnet_optimize=0";
  // A net made through the workspace API keeps every blob Caffe2 would have written (users fetch
  // intermediate blobs); Predictors, `hetnet run` and `hetnet serve` ask for the rewrite.
  if (asked < 0) return "a workspace net (hetnet_optimize=1 asks for the rewrite; Predictors set it)";
  for (int i = 0; i < def.op_size(); ++i) {
    const auto& op = def.op(i);
    const std::string& t = op.type();
    const bool test_mode_op = t == "SpatialBN" || t == "Dropout";
    if (EndsWith(t, "Gradient") || EndsWith(t, "Grad") || TrainingTypes().count(t) ||
        (test_mode_op && IntArg(op, "is_test", 0) == 0))
      return MakeString("a training net: operator #", i, " (", t, test_mode_op ? " with is_test=0" : "", ")");
  }
  return "";
}

void RequestInferenceRewrite(caffe2::NetDef* net) {
  for (const auto& a : net->arg())
    if (a.name() == "hetnet_optimize") return;  // the net's own choice stands
  auto* a = net->add_arg();
  a->set_name("hetnet_optimize");
  a->set_i(1);
}

InferenceRewrite RewriteForInference(const caffe2::NetDef& def, Workspace* ws) {
  InferenceRewrite r;
  r.skipped = InferenceRewriteBlocker(def);
  bool candidates = false;
  for (const auto& op : def.op())
    candidates |= op.type() == "Conv" || op.type() == "FC" || op.type() == "FCTransposed" || op.type() == "Dropout";
  if (!r.skipped.empty() || !candidates) {
    if (r.skipped.empty()) r.skipped = "nothing to rewrite";
    r.net = def;
    r.op_notes.assign(def.op_size(), "");
    return r;
  }
  return Rewriter(def, ws).Run();
}

bool FusedReluArgument(const caffe2::OperatorDef& op) {
  const std::string act = ArgumentHelper(op).GetSingleArgument<std::string>("fused_activation", "");
  if (act.empty()) return false;
  HN_CHECK_KIND(kInvalidArgument, act == "Relu", op.type(), " '", op.name(), "': fused_activation '", act,
                "' is not supported (only \"Relu\")");
  return true;
}

void AnnotatePlacement(const InferenceRewrite& rewrite, PlacementReport* report) {
  if (!rewrite.changed) return;
  std::set<int> copies;
  for (const auto& c : report->copies) copies.insert(c.op_index);
  size_t k = 0;  // the report's non-copy ops are the rewritten net's ops, in order
  for (auto& p : report->ops) {
    if (copies.count(p.index)) continue;
    if (k < rewrite.op_notes.size() && !rewrite.op_notes[k].empty()) p.reason += "; " + rewrite.op_notes[k];
    ++k;
  }
}

}  // namespace hetnet
