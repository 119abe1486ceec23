#include "core/op_cost.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace hetnet {

namespace {

std::map<std::string, OpCostFn>& Registry() {
  static std::map<std::string, OpCostFn> m;
  return m;
}

}  // namespace

void OpCostRegistry::Register(const std::string& type, OpCostFn fn) {
  HN_ENFORCE(static_cast<bool>(fn), "REGISTER_OP_COST(", type, "): empty cost function");
  HN_ENFORCE(Registry().emplace(type, std::move(fn)).second, "REGISTER_OP_COST(", type, ") registered twice");
}

const OpCostFn* OpCostRegistry::Find(const std::string& type) {
  auto it = Registry().find(type);
  return it == Registry().end() ? nullptr : &it->second;
}

std::string OpSignature(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& inputs) {
  std::string s = def.type();
  if (!def.engine().empty()) s += "[" + def.engine() + "]";
  s += "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].known) return "";
    s += (i ? "," : "") + std::string(DataTypeName(inputs[i].dtype)) + "[";
    for (size_t k = 0; k < inputs[i].dims.size(); ++k) s += (k ? "," : "") + std::to_string(inputs[i].dims[k]);
    s += "]";
  }
  s += ")";
  std::vector<std::string> args;
  for (const auto& a : def.arg()) args.push_back(a.ShortDebugString());  // starts with name: "..."
  std::sort(args.begin(), args.end());
  if (!args.empty()) {
    s += "{";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ";" : "") + args[i];
    s += "}";
  }
  return s;
}

double NumElements(const TensorInfo& t) {
  if (!t.known) return 0;
  double n = 1;
  for (int64_t d : t.dims) n *= static_cast<double>(d < 0 ? 0 : d);
  return n;
}

double NumBytes(const TensorInfo& t) { return NumElements(t) * static_cast<double>(ItemSize(t.dtype)); }

bool AllKnown(const std::vector<TensorInfo>& ts) {
  for (const TensorInfo& t : ts)
    if (!t.known) return false;
  return true;
}

OpCost MemoryCost(const std::vector<TensorInfo>& inputs, const std::vector<TensorInfo>& outputs, double flops_per_out) {
  OpCost c;
  c.kind = OpKind::kMemory;
  for (const TensorInfo& t : inputs) c.bytes_read += NumBytes(t);
  for (const TensorInfo& t : outputs) {
    c.bytes_written += NumBytes(t);
    c.flops += flops_per_out * NumElements(t);
  }
  return c;
}

OpCost ComputeCost(OpKind kind, double flops, const std::vector<TensorInfo>& inputs,
                   const std::vector<TensorInfo>& outputs) {
  OpCost c = MemoryCost(inputs, outputs, 0);
  c.kind = kind;
  c.flops = flops;
  return c;
}

OpCostFn ElementwiseCostFn(double flops_per_out) {
  return [flops_per_out](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in,
                         const std::vector<TensorInfo>& out) { return MemoryCost(in, out, flops_per_out); };
}

OpCost CostOf(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& inputs,
              const std::vector<TensorInfo>& outputs) {
  if (const OpCostFn* fn = OpCostRegistry::Find(def.type())) {
    // A cost function needs its shapes; without them nothing is known.
    if (!AllKnown(inputs) || !AllKnown(outputs)) {
      OpCost unknown;
      unknown.estimated = true;
      return unknown;
    }
    return (*fn)(def, inputs, outputs);
  }
  OpCost c;
  if (AllKnown(inputs) && AllKnown(outputs)) c = MemoryCost(inputs, outputs, 1.0);
  c.estimated = true;
  return c;
}

}  // namespace hetnet
