// Inference rewrites at net creation: when a net gets them, the options, and the placement report's
// notes. The rewriter (BN folding, Relu and residual fusion, test-mode Dropout removal, then
// channels-last activations) is core/inference_fusion_rewriter.h; core/inference_fusion.h states the rules.
#include "core/inference_fusion.h"

#include <cstdlib>

#include "core/argument.h"
#include "core/inference_fusion_rewriter.h"
#include "core/reduced_precision.h"

namespace hetnet {

InferenceFusionOptions& DefaultInferenceFusionOptions() {
  static InferenceFusionOptions opts = [] {
    InferenceFusionOptions o;
    const char* env = std::getenv("HETNET_OPTIMIZE");
    o.enabled = !(env && std::string(env) == "0");
    const char* cl = std::getenv("HETNET_CHANNELS_LAST");
    o.channels_last = !(cl && std::string(cl) == "0");
    const char* blocked = std::getenv("HETNET_BLOCKED_ACTIVATIONS");
    o.blocked_activations = !(blocked && std::string(blocked) == "0");
    return o;
  }();
  return opts;
}

const std::set<std::string>& EnginesWithFusedActivation() {
  // The default kernels, DNNL's (a oneDNN post-op, operators/conv_op_dnnl.cc, fc_op_dnnl.cc),
  // PACKED's (in the GEMM's store, operators/fc_op_packed.cc) and CUDNN's Conv (cuDNN's fused
  // conv + bias + activation call, operators/conv_op_cudnn.h) apply it.
  static const std::set<std::string> engines = {"", "DNNL", "PACKED", "CUDNN"};
  return engines;
}

namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
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
    // StopGradient is the forward identity (ONNX's Identity imports as it), not a gradient op.
    if ((EndsWith(t, "Gradient") && t != "StopGradient") || EndsWith(t, "Grad") || TrainingTypes().count(t) ||
        (test_mode_op && inference_fusion::IntArg(op, "is_test", 0) == 0))
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
    candidates |= op.type() == "Conv" || op.type() == "FC" || op.type() == "FCTransposed" || op.type() == "Dropout" ||
                  op.type() == "StopGradient" || op.type() == "Copy";
  candidates |= NetPrecision(def) != DataType::Float;
  if (!r.skipped.empty() || !candidates) {
    if (r.skipped.empty()) r.skipped = "nothing to rewrite";
    r.net = def;
    r.op_notes.assign(def.op_size(), "");
    return r;
  }
  return inference_fusion::Rewriter(def, ws).Run();
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
