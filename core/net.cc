#include "core/net.h"

#include <map>
#include <set>

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

std::string OperatorRunContext(const caffe2::NetDef& net, int index, const OperatorBase& op) {
  std::string s = OperatorContext(net, index);
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

std::unique_ptr<NetBase> CreateNetFromDef(const caffe2::NetDef& def, Workspace* ws) {
  const std::string net_ctx = "while creating net '" + def.name() + "'";
  CopyPassResult placed;
  try {
    placed = PlaceNet(def, *ws, DefaultPlacementOptions());
  } catch (...) {
    RethrowWithContext(net_ctx);
  }
  const caffe2::NetDef& prepared = placed.net;
  std::string type = prepared.type().empty() ? "simple" : prepared.type();
  const NetCreator* fn = NetRegistry::Find(type);
  if (!fn) {
    // Caffe2's parallel executors compute the same values as the sequential one.
    static const std::set<std::string> parallel = {"dag", "async_dag", "async_scheduling", "prof_dag",
                                                   "async_simple", "parallel", "async_polling"};
    if (parallel.count(type)) fn = NetRegistry::Find(parallel.count("dag") && NetRegistry::Find("dag") ? "dag" : "simple");
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
