#include "core/net.h"
#include "core/net_type.h"

#include <exception>
#include <map>
#include <new>
#include <set>

#include "core/checked_size.h"
#include "core/inference_fusion.h"
#include "core/workspace.h"

namespace hetnet {

namespace {
std::map<std::string, NetCreator>& Creators() {
  static std::map<std::string, NetCreator> m;
  return m;
}
}  // namespace

void NetRegistry::Register(const std::string& type, NetCreator fn) { Creators()[type] = std::move(fn); }

const NetCreator* NetRegistry::Find(const std::string& type) {
  auto it = Creators().find(type);
  return it == Creators().end() ? nullptr : &it->second;
}

std::vector<std::string> NetRegistry::Types() {
  std::vector<std::string> out;
  for (const auto& kv : Creators()) out.push_back(kv.first);
  return out;
}

std::string OperatorContext(const caffe2::NetDef& net, int index) {
  const auto& op = net.op(index);
  std::string s = MakeString("in net '", net.name(), "', operator #", index, " (", op.type());
  if (!op.name().empty()) s += " '" + op.name() + "'";
  s += ")";
  if (!op.debug_info().empty()) s += "\n  operator created at: " + op.debug_info();
  return s;
}

namespace {
// What the exception being handled is, when it failed sizing or allocating a tensor and nothing
// on its way up named the output (OperatorBase::OutputTensor adds "while allocating output ...").
enum class UnnamedTensorFailure { kNone, kOutOfMemory, kSize };
UnnamedTensorFailure CurrentUnnamedTensorFailure() {
  std::exception_ptr cur = std::current_exception();
  if (!cur) return UnnamedTensorFailure::kNone;
  try {
    std::rethrow_exception(cur);
  } catch (const Error& e) {
    for (const auto& c : e.context())
      if (c.rfind("while allocating output", 0) == 0) return UnnamedTensorFailure::kNone;
    // Tensor's own size errors ("tensor: shape [...] has too many elements", "tensor byte size: ...").
    const std::string& m = e.message();
    if (m.rfind("tensor: ", 0) == 0 || m.rfind("tensor byte size: ", 0) == 0) return UnnamedTensorFailure::kSize;
    return e.kind() == ErrorKind::kOutOfMemory ? UnnamedTensorFailure::kOutOfMemory : UnnamedTensorFailure::kNone;
  } catch (const std::bad_alloc&) {
    return UnnamedTensorFailure::kOutOfMemory;
  } catch (...) {
    return UnnamedTensorFailure::kNone;
  }
}
}  // namespace

std::string OperatorRunContext(const caffe2::NetDef& net, int index, const OperatorBase& op) {
  std::string s = OperatorContext(net, index);
  const UnnamedTensorFailure failure = CurrentUnnamedTensorFailure();
  if (failure == UnnamedTensorFailure::kSize) {
    // An operator sized a tensor itself (Output(i)->Resize): name its outputs.
    std::string outs;
    for (int i = 0; i < op.OutputSize(); ++i) outs += MakeString(i ? ", " : "", "'", op.def().output(i), "'");
    if (op.OutputSize() == 1) s += "\n  while sizing output " + outs + " (or a buffer of the operator)";
    else if (op.OutputSize() > 1) s += "\n  while sizing one of the outputs " + outs + " (or a buffer of the operator)";
  } else if (failure == UnnamedTensorFailure::kOutOfMemory) {
    // Name the output(s) being allocated: those whose tensor has a shape but no memory for it yet.
    auto& mop = const_cast<OperatorBase&>(op);
    std::string outs;
    for (int i = 0; i < mop.OutputSize(); ++i) {
      const Blob* b = mop.OutputBlob(i);
      if (!b->IsTensor()) continue;
      const Tensor& t = b->GetTensor();
      const auto& st = t.storage();
      const bool unallocated = t.numel() > 0 && (!st || t.dtype() == DataType::Undefined || st->capacity < t.nbytes());
      if (unallocated) outs += MakeString(outs.empty() ? "" : ", ", "'", op.def().output(i), "' ", t.ShapeString());
    }
    if (outs.empty()) {
      for (int i = 0; i < mop.OutputSize(); ++i) outs += MakeString(i ? ", " : "", "'", op.def().output(i), "'");
    }
    if (!outs.empty()) s += "\n  while allocating output " + outs;
  }
  if (op.InputSize() == 0) return s;
  s += "\n  inputs:";
  for (int i = 0; i < op.InputSize(); ++i) {
    const Blob* b = op.InputBlob(i);
    s += MakeString(" '", op.def().input(i), "' ");
    if (b->IsTensor() && b->GetTensor().dtype() != DataType::Undefined) s += b->GetTensor().DebugString();
    else s += b->empty() ? "(no data)" : b->TypeName();
    if (i + 1 < op.InputSize()) s += ",";
  }
  return s;
}

void RethrowWithContext(const std::string& context) {
  try {
    throw;
  } catch (Error& e) {
    e.AddContext(context);
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kOutOfMemory, "out of host memory").AddContext(context);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kRuntime, e.what()).AddContext(context);
  }
}

// Names that end up in messages and paths may not hold NUL bytes (they would be cut there).
static void EnforceNoNulNames(const caffe2::NetDef& def) {
  EnforceNoNul(def.name(), "net name");
  auto blobs = [](const google::protobuf::RepeatedPtrField<std::string>& names, const char* what) {
    for (const auto& n : names) EnforceNoNul(n, what);
  };
  blobs(def.external_input(), "external input blob name");
  blobs(def.external_output(), "external output blob name");
  for (int i = 0; i < def.op_size(); ++i) {
    const auto& op = def.op(i);
    try {
      EnforceNoNul(op.type(), "operator type");
      EnforceNoNul(op.name(), "operator name");
      blobs(op.input(), "input blob name");
      blobs(op.output(), "output blob name");
      blobs(op.control_input(), "control input blob name");
    } catch (Error& e) {
      throw e.AddContext(MakeString("in net '", PrintableName(def.name()), "', operator #", i));
    }
  }
}

bool IsParallelNetType(const std::string& type) {
  static const std::set<std::string> parallel = {"dag",         "async_dag", "async_scheduling", "prof_dag",
                                                 "async_simple", "parallel", "async_polling"};
  return parallel.count(type) != 0;
}

std::unique_ptr<NetBase> CreateNetFromDef(const caffe2::NetDef& def, Workspace* ws,
                                          const std::map<std::string, Device>& fed_input_devices) {
  const std::string net_ctx = "while creating net '" + PrintableName(def.name()) + "'";
  CopyPassResult placed;
  try {
    CheckLimit(Limit::kMaxNetOps, def.op_size(), MakeString("the number of operators"));
    EnforceNoNulNames(def);
    // Inference rewrites (BN folding, Relu fusion, Dropout removal) before placement: the placement
    // report describes the net that runs.
    const InferenceRewrite rewrite = RewriteForInference(def, ws);
    placed = PlaceNet(rewrite.net, *ws, DefaultPlacementOptions(), fed_input_devices);
    AnnotatePlacement(rewrite, &placed.report);
  } catch (...) {
    RethrowWithContext(net_ctx);
  }
  const caffe2::NetDef& prepared = placed.net;
  std::string type = prepared.type().empty() ? "simple" : prepared.type();
  const NetCreator* fn = NetRegistry::Find(type);
  if (!fn) {
    // Caffe2's parallel executors compute the same values as the sequential one.
    if (IsParallelNetType(type)) fn = NetRegistry::Find(NetRegistry::Find("dag") ? "dag" : "simple");
  }
  if (!fn) {
    std::string known;
    for (const auto& t : NetRegistry::Types()) known += (known.empty() ? "" : ", ") + t;
    throw Error(ErrorKind::kNotFound, "unknown net type '" + type + "' (known: " + known + ")").AddContext(net_ctx);
  }
  auto net = (*fn)(prepared, ws);
  net->set_placement(std::move(placed.report));
  return net;
}

PlacementReport NetBase::MeasuredPlacement() const {
  PlacementReport r = placement_;
  const auto& ops = operators();
  for (auto& c : r.copies)
    if (c.op_index < static_cast<int>(ops.size()) && ops[c.op_index]->bytes_copied_last_run() >= 0)
      c.bytes = ops[c.op_index]->bytes_copied_last_run();
  return r;
}

}  // namespace hetnet
