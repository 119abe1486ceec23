// The inference rewriter's sweep, its graph queries, test-mode Dropout removal and identity
// removal (core/inference_fusion_rewriter.h).
#include "core/inference_fusion_rewriter.h"

#include <climits>

#include "core/blocked_activations_pass.h"
#include "core/channels_last_pass.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/reduced_precision.h"

namespace hetnet {
namespace inference_fusion {

Rewriter::Rewriter(const caffe2::NetDef& def, Workspace* ws) : def_(def), ws_(ws) {
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

InferenceRewrite Rewriter::Run() {
  PreferPackedFC();
  Sweep(&Rewriter::TryFoldBN);
  Sweep(&Rewriter::TryRemoveDropout);
  Sweep(&Rewriter::TryRemoveIdentity);
  Sweep(&Rewriter::TryFuseResidual);
  Sweep(&Rewriter::TryFuseRelu);
  if (DefaultInferenceFusionOptions().channels_last) {
    std::set<std::string> taken = given_;
    for (const auto* names : {&external_in_, &other_reads_, &other_writes_, &protected_})
      taken.insert(names->begin(), names->end());
    std::vector<std::string> lines;
    if (DefaultInferenceFusionOptions().blocked_activations) lines = BlockedActivations(taken);
    if (lines.empty()) lines = ConvertToChannelsLast(ChannelsLastInput{&def_, &ops_, &notes_, protected_, taken});
    for (auto& line : lines) log_.push_back(std::move(line));
  }
  ReducePrecision();
  InferenceRewrite r;
  r.net = def_;
  r.net.clear_op();
  for (const auto& op : ops_) *r.net.add_op() = op;
  r.changed = !log_.empty();
  r.op_notes = notes_;
  r.notes = log_;
  return r;
}

// The blocked-activations pass, with filter shapes from the workspace: a constant, or the constant
// a FoldBatchNormWeights op folds (same shape).
std::vector<std::string> Rewriter::BlockedActivations(const std::set<std::string>& taken) {
  const BlobUses uses(ops_);
  BlockedActivationsInput in{&def_, &ops_, &notes_, protected_, taken, DefaultInferenceFusionOptions().channel_block, {}};
  if (in.block == 0) in.block = DefaultChannelBlock();
  in.filter_shape = [this, &uses](const std::string& name) -> std::vector<int64_t> {
    if (const Tensor* t = Constant(name, uses)) return t->shape();
    const auto& w = uses.Writers(name);
    if (w.size() == 1 && ops_[w[0]].type() == "FoldBatchNormWeights" && ops_[w[0]].output(0) == name)
      if (const Tensor* t = Constant(ops_[w[0]].input(0), uses)) return t->shape();
    return {};
  };
  return ConvertToBlockedActivations(std::move(in));
}

// One pass over the ops with uses computed once (accepted rewrites of one kind never invalidate
// each other's conditions), then the removed ops are dropped.
void Rewriter::Sweep(Try fn) {
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
void Rewriter::PreferPackedFC() {
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

bool Rewriter::DeviceOf(const caffe2::OperatorDef& op, Device* d) const {
  try {
    *d = DeviceFromOption(op.has_device_option() ? op.device_option() : def_.device_option());
    return true;
  } catch (const Error&) {
    return false;  // placement reports the bad device
  }
}

std::string Rewriter::Label(int i) const {
  return ops_[i].name().empty() ? "'" + ops_[i].output(0) + "'" : "'" + ops_[i].name() + "'";
}

// The single reader of op i's output Y is op j (input 0), which writes Z; moving Z's write from j
// to i (and no longer writing Y) changes nothing any reader or the user can see.
int Rewriter::SoleConsumer(int i, const BlobUses& uses, const std::set<std::string>& types, bool any_input) const {
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

// A float32 (or `also`) tensor in the workspace that no net writes (a constant from the init net),
// on the CPU or on the GPU where an init net placed it (an ONNX model imported for CUDA).
const Tensor* Rewriter::Constant(const std::string& name, const BlobUses& uses, DataType also) const {
  if (!uses.Writers(name).empty() || other_writes_.count(name)) return nullptr;
  const Blob* b = ws_->GetBlob(name);
  if (!b || !b->IsTensor()) return nullptr;
  const Tensor& t = b->GetTensor();
  if (!t.initialized() || (t.dtype() != DataType::Float && t.dtype() != also)) return nullptr;
  return &t;
}

// "<base>", else "<base>_1", ...: a name no net of the workspace reads (other than the one being
// replaced), this net does not use, and this pass has not given out.
std::string Rewriter::FreshName(const std::string& base, const BlobUses& uses) {
  for (int k = 0;; ++k) {
    std::string n = k ? base + "_" + std::to_string(k) : base;
    if (other_reads_.count(n) || uses.readers.count(n) || uses.writers.count(n) || external_in_.count(n) ||
        protected_.count(n) || !given_.insert(n).second)
      continue;
    return n;
  }
}

void Rewriter::Record(int i, int j, caffe2::OperatorDef fused, const std::string& log, const std::string& note) {
  ops_[i] = std::move(fused);
  dead_[j] = true;
  AddNote(i, note);
  log_.push_back(log);
}

bool Rewriter::TryRemoveDropout(int j, const BlobUses& uses) {
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

// StopGradient (ONNX's Identity) or a same-device Copy from X to Y, where X is an intermediate blob
// of this net that one earlier op w writes: w writes Y instead, X's other readers read Y, and the
// copy goes (a 64 MB output copied for nothing: 8 ms a run). Only when nothing else sees the
// difference: X is no input, output or other net's blob; Y is written by this op alone, read by no
// op before it, and no other net's blob; w and the op run on one device.
bool Rewriter::TryRemoveIdentity(int j, const BlobUses& uses) {
  const auto& op = ops_[j];
  if ((op.type() != "StopGradient" && op.type() != "Copy") || op.input_size() != 1 || op.output_size() != 1)
    return false;
  const std::string X = op.input(0), Y = op.output(0);
  if (X == Y || protected_.count(X) || external_in_.count(X) || other_reads_.count(X) || other_writes_.count(X) ||
      external_in_.count(Y) || other_writes_.count(Y) || other_reads_.count(Y))
    return false;
  const auto& wx = uses.Writers(X);
  const auto& wy = uses.Writers(Y);
  if (wx.size() != 1 || wx[0] >= j || dead_[wx[0]] || wy.size() != 1 || wy[0] != j) return false;
  const int w = wx[0];
  if (!uses.Readers(Y).empty() && uses.Readers(Y).front() <= j) return false;
  Device dw, dj;
  if (!DeviceOf(ops_[w], &dw) || !DeviceOf(op, &dj) || !(dw == dj)) return false;
  int outs = 0;
  for (const auto& n : ops_[w].output()) outs += n == X;
  for (const auto& n : ops_[w].input()) outs += n == X || n == Y;  // in place, or reading its new name
  if (outs != 1) return false;
  for (int k = 0; k < ops_[w].output_size(); ++k)
    if (ops_[w].output(k) == X) ops_[w].set_output(k, Y);
  AddNote(w, "writes '" + Y + "' (" + op.type() + " " + Label(j) + " removed)");
  for (int r : uses.Readers(X)) {
    if (r == j) continue;
    for (int k = 0; k < ops_[r].input_size(); ++k)
      if (ops_[r].input(k) == X) ops_[r].set_input(k, Y);
    AddNote(r, "reads '" + Y + "' (" + op.type() + " removed)");
  }
  dead_[j] = true;
  log_.push_back(op.type() + " " + Label(j) + " removed: '" + X + "' is written as '" + Y + "'");
  return true;
}

// Last: the ops converted are the fused ones, and folded weights are what gets narrowed.
void Rewriter::ReducePrecision() {
  const DataType precision = NetPrecision(def_);
  if (precision == DataType::Float) return;
  const BlobUses uses(ops_);
  ReducedPrecisionInput in{&def_, &ops_, &notes_, protected_, given_, nullptr, nullptr};
  for (const auto* names : {&external_in_, &other_reads_, &other_writes_, &protected_})
    in.taken.insert(names->begin(), names->end());
  // A weight, or BN-folded weights (rewritten only when a weight or statistic changes): converted
  // once by CastConstant, again only when it changes.
  in.is_constant = [this, &uses](const std::string& n) {
    if (Constant(n, uses)) return true;
    const auto& w = uses.Writers(n);
    return !w.empty() && !other_writes_.count(n) &&
           std::all_of(w.begin(), w.end(), [this](int i) { return ops_[i].type() == "FoldBatchNormWeights"; });
  };
  in.is_narrow_constant = [this, &uses, precision](const std::string& n) {
    if (!uses.Writers(n).empty() || other_writes_.count(n)) return false;
    const Blob* b = ws_->GetBlob(n);
    return b && b->IsTensor() && b->GetTensor().initialized() && b->GetTensor().dtype() == precision;
  };
  for (auto& line : ConvertToReducedPrecision(std::move(in), precision)) log_.push_back(std::move(line));
}

}  // namespace inference_fusion
}  // namespace hetnet
