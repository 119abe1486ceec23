#include "core/reduced_precision.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/argument.h"
#include "core/bfloat16.h"
#include "core/blob_form_pass.h"
#include "core/error.h"
#include "core/half.h"
#include "core/inference_fusion.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {
namespace {

constexpr const char* kPrecisionArg = "hetnet_precision";

using KernelKey = std::tuple<std::string, DeviceType, std::string>;
std::map<KernelKey, ReducedPrecisionKernel>& Kernels() {
  static std::map<KernelKey, ReducedPrecisionKernel> k;
  return k;
}

caffe2::OperatorDef CastOp(const char* type, const std::string& from, const std::string& to, DataType dtype,
                           const caffe2::OperatorDef& near) {
  caffe2::OperatorDef op;
  op.set_type(type);
  op.add_input(from);
  op.add_output(to);
  auto* a = op.add_arg();
  a->set_name("to");
  a->set_i(static_cast<int>(dtype));
  if (near.has_device_option()) *op.mutable_device_option() = near.device_option();
  return op;
}

class ReducedPrecisionPolicy final : public BlobFormPolicy {
 public:
  ReducedPrecisionPolicy(const ReducedPrecisionInput& in, DataType dtype) : in_(in), dtype_(dtype) {}

  std::string Suffix() const override { return dtype_ == DataType::BFloat16 ? "_bf16" : "_fp16"; }

  FormRole RoleOf(const caffe2::OperatorDef& op) const override {
    FormRole r;
    std::string engine;
    const ReducedPrecisionKernel* k = KernelFor(op, &engine);
    if (!k) return r;
    r.convert = true;
    r.follower = k->follower;
    const int n = k->float_inputs < 0 ? op.input_size() : std::min(k->float_inputs, op.input_size());
    for (int i = 0; i < n; ++i) r.inputs.push_back(i);
    const int m = k->float_outputs < 0 ? op.output_size() : std::min(k->float_outputs, op.output_size());
    for (int i = 0; i < m; ++i) r.outputs.push_back(i);
    return r;
  }

  bool InForm(const std::string& b) const override { return in_.is_narrow_constant && in_.is_narrow_constant(b); }

  caffe2::OperatorDef ToForm(const std::string& from, const std::string& to, const caffe2::OperatorDef& reader,
                             int slot) const override {
    // A weight (an input after the first: a filter, a bias; the first is the data, even when a
    // placeholder filled by an init net looks constant) converts once, again only when it changes;
    // an activation every run.
    const bool constant = slot >= 1 && in_.is_constant && in_.is_constant(from);
    return CastOp(constant ? "CastConstant" : "Cast", from, to, dtype_, reader);
  }

  caffe2::OperatorDef FromForm(const std::string& from, const std::string& to,
                               const caffe2::OperatorDef& writer) const override {
    return CastOp("Cast", from, to, DataType::Float, writer);
  }

  std::string Adapt(caffe2::OperatorDef* op) const override {
    std::string engine;
    KernelFor(*op, &engine);
    std::string note = PrecisionName(dtype_) + " (float32 accumulation)";
    if (engine != ResolveEngine(*op, DeviceOf(*op))) {
      op->set_engine(engine);
      note += ", engine " + engine;
    }
    return note;
  }

 private:
  Device DeviceOf(const caffe2::OperatorDef& op) const {
    return DeviceFromOption(op.has_device_option() ? op.device_option() : in_.net->device_option());
  }

  // The narrow kernel of op: its engine's, else the device's default engine's (an engine the
  // inference rewrite chose, e.g. PACKED for FC, that has none). *engine: the engine that has it.
  const ReducedPrecisionKernel* KernelFor(const caffe2::OperatorDef& op, std::string* engine) const {
    Device d;
    try {
      d = DeviceOf(op);
    } catch (const Error&) {
      return nullptr;  // placement reports the bad device
    }
    caffe2::OperatorDef plain = op;
    plain.clear_engine();
    for (const caffe2::OperatorDef* candidate : {&op, static_cast<const caffe2::OperatorDef*>(&plain)}) {
      *engine = ResolveEngine(*candidate, d);
      const ReducedPrecisionKernel* k = FindReducedPrecisionKernel(op.type(), d.type, *engine);
      if (k && std::count(k->dtypes.begin(), k->dtypes.end(), dtype_) && (!k->accepts || k->accepts(op, dtype_)))
        return k;
      if (op.engine().empty()) break;
    }
    return nullptr;
  }

  const ReducedPrecisionInput& in_;
  DataType dtype_;
};

// A BN fold (FoldBatchNormWeights, core/inference_fusion.h) whose every output only a CastConstant
// reads writes the narrow dtype itself (its `to`), and the CastConstants go: no float32 folded copy
// is kept beside the narrow one. Returns how many folds.
int FoldIntoNarrow(BlobFormResult* r, DataType dtype, const std::set<std::string>& keep) {
  std::map<std::string, std::vector<int>> readers, writers;
  for (int i = 0; i < static_cast<int>(r->ops.size()); ++i) {
    for (const auto& n : r->ops[i].input()) readers[n].push_back(i);
    for (const auto& n : r->ops[i].output()) writers[n].push_back(i);
  }
  std::vector<bool> dead(r->ops.size(), false);
  int folds = 0;
  for (auto& fold : r->ops) {
    if (fold.type() != "FoldBatchNormWeights") continue;
    std::vector<int> casts;
    for (const auto& o : fold.output()) {
      const auto& rd = readers[o];
      if (keep.count(o) || writers[o].size() != 1 || rd.size() != 1 || r->ops[rd[0]].type() != "CastConstant") break;
      casts.push_back(rd[0]);
    }
    if (casts.size() != static_cast<size_t>(fold.output_size())) continue;
    for (size_t k = 0; k < casts.size(); ++k) {
      fold.set_output(static_cast<int>(k), r->ops[casts[k]].output(0));
      dead[casts[k]] = true;
    }
    auto* a = fold.add_arg();
    a->set_name("to");
    a->set_i(static_cast<int>(dtype));
    ++folds;
  }
  std::vector<caffe2::OperatorDef> ops;
  std::vector<std::string> notes;
  for (size_t i = 0; i < r->ops.size(); ++i)
    if (!dead[i]) ops.push_back(std::move(r->ops[i])), notes.push_back(std::move(r->op_notes[i]));
  r->switches -= static_cast<int>(r->ops.size() - ops.size());
  r->ops = std::move(ops);
  r->op_notes = std::move(notes);
  return folds;
}

}  // namespace

void RegisterReducedPrecisionKernel(const std::string& type, DeviceType device, const std::string& engine,
                                    ReducedPrecisionKernel kernel) {
  Kernels()[KernelKey(type, device, engine)] = std::move(kernel);
}

const ReducedPrecisionKernel* FindReducedPrecisionKernel(const std::string& type, DeviceType device,
                                                         const std::string& engine) {
  auto it = Kernels().find(KernelKey(type, device, engine));
  return it == Kernels().end() ? nullptr : &it->second;
}

std::string PrecisionName(DataType t) {
  return t == DataType::BFloat16 ? "bfloat16" : t == DataType::Float16 ? "float16" : "float32";
}

DataType ParsePrecision(const std::string& s) {
  std::string v = s;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.empty() || v == "float32" || v == "fp32" || v == "float") return DataType::Float;
  if (v == "bfloat16" || v == "bf16") return DataType::BFloat16;
  if (v == "float16" || v == "fp16" || v == "half") return DataType::Float16;
  HN_THROW(kInvalidArgument, "precision '", s, "' is not one of float32 (fp32), bfloat16 (bf16), float16 (fp16)");
}

DataType NetPrecision(const caffe2::NetDef& def) {
  const caffe2::Argument* a = ArgumentHelper(def).Find(kPrecisionArg);
  if (!a) return DataType::Float;
  try {
    HN_CHECK_KIND(kInvalidArgument, a->has_s(), "argument ", kPrecisionArg, " must be a string");
    return ParsePrecision(a->s());
  } catch (Error& e) {
    throw e.AddContext("in net '" + def.name() + "'");
  }
}

void SetNetPrecision(caffe2::NetDef* def, DataType precision) {
  auto* args = def->mutable_arg();
  args->erase(std::remove_if(args->begin(), args->end(), [](const caffe2::Argument& a) { return a.name() == kPrecisionArg; }),
              args->end());
  if (precision == DataType::Float) return;
  auto* a = def->add_arg();
  a->set_name(kPrecisionArg);
  a->set_s(PrecisionName(precision));
}

std::vector<std::string> ConvertToReducedPrecision(ReducedPrecisionInput in, DataType precision) {
  if (precision == DataType::Float) return {};
  ReducedPrecisionPolicy policy(in, precision);
  BlobFormInput form{in.net, in.ops, in.op_notes, in.keep, in.taken};
  BlobFormResult r = ConvertBlobForms(std::move(form), policy);
  const int folds = r.anchors == 0 ? 0 : FoldIntoNarrow(&r, precision, in.keep);
  if (r.anchors == 0)
    return {MakeString(PrecisionName(precision), ": no operator of the net has a ", PrecisionName(precision),
                       " kernel on its device and engine; the net runs in float32")};
  *in.ops = std::move(r.ops);
  *in.op_notes = std::move(r.op_notes);
  return {MakeString(PrecisionName(precision), " (float32 accumulation): ", r.anchors + r.followers, " ops, ",
                     r.switches, " casts, ", folds, " batch norm folds writing ", PrecisionName(precision))};
}

std::vector<std::string> NarrowConstantsInPlace(const caffe2::NetDef& def, Workspace* ws) {
  const DataType precision = NetPrecision(def);
  if (precision == DataType::Float) return {};
  const InferenceRewrite preview = RewriteForInference(def, ws);
  // weight -> read only by CastConstant ops, or as the filter of BN folds writing the narrow dtype
  std::map<std::string, bool> only_cast_constant;
  for (const auto& op : preview.net.op()) {
    const bool narrow_fold = op.type() == "FoldBatchNormWeights" && ArgumentHelper(op).HasArgument("to");
    for (int i = 0; i < op.input_size(); ++i) {
      auto it = only_cast_constant.emplace(op.input(i), true).first;
      it->second = it->second && (op.type() == "CastConstant" || (narrow_fold && i == 0));
    }
  }
  std::set<std::string> elsewhere(def.external_output().begin(), def.external_output().end());
  for (const auto& name : ws->Nets())
    if (NetBase* other = ws->GetNet(name))
      if (name != def.name())
        for (const auto& op : other->def().op()) elsewhere.insert(op.input().begin(), op.input().end());
  std::vector<std::string> converted;
  for (const auto& [name, only] : only_cast_constant) {
    Blob* b = ws->GetMutableBlob(name);
    if (!only || elsewhere.count(name) || !b || !b->IsTensor()) continue;
    const Tensor& stored = b->GetTensor();
    if (stored.dtype() != DataType::Float) continue;
    // A weight on a GPU (an ONNX model imported for one, an init net filling there) is converted
    // through the host, once, and goes back to its device narrow.
    const Device device = stored.device();
    const Tensor w = device.is_cpu() ? stored : stored.To(Device::CPU());
    Tensor narrow(w.shape(), precision);
    const float* src = w.data<float>();
    if (precision == DataType::BFloat16) {
      BFloat16* dst = narrow.mutable_data<BFloat16>();
      for (int64_t i = 0; i < w.numel(); ++i) dst[i] = FloatToBFloat16(src[i]);
    } else {
      Half* dst = narrow.mutable_data<Half>();
      for (int64_t i = 0; i < w.numel(); ++i) dst[i] = FloatToHalf(src[i]);
    }
    *b->GetMutable<Tensor>() = device.is_cpu() ? std::move(narrow) : narrow.To(device);
    converted.push_back(name);
  }
  return converted;
}

}  // namespace hetnet
