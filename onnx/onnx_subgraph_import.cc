// Subgraph import for the control-flow converters (onnx_subgraph_import.h).
#include "onnx/onnx_subgraph_import.h"

#include <set>

namespace hetnet::onnxio {

void AddNetArg(caffe2::OperatorDef& op, const std::string& name, const caffe2::NetDef& net) {
  auto& arg = *op.add_arg();
  arg.set_name(name);
  *arg.mutable_n() = net;
}

caffe2::OperatorDef& EmitControl(ConvertContext& c, const std::string& type, std::vector<std::string> inputs,
                                 const std::vector<const Subnet*>& subs) {
  std::set<std::string> outer;
  for (const Subnet* s : subs) outer.insert(s->outer.begin(), s->outer.end());
  std::vector<std::string> outputs;
  for (int i = 0; i < c.num_outputs(); ++i) outputs.push_back(c.has_out(i) ? c.out(i) : c.Fresh(c.op_type() + "_unused"));
  inputs.insert(inputs.end(), outer.begin(), outer.end());
  auto& op = c.Emit(type, inputs, outputs);
  op.clear_device_option();
  auto& arg = *op.add_arg();
  arg.set_name("outer_inputs");
  for (const auto& name : outer) arg.add_strings(name);
  return op;
}

void EmitSubnetOps(ConvertContext& c, const Subnet& s, const std::function<std::string(const std::string&)>& rename) {
  for (const auto& [name, k] : s.consts) c.DefineConst(rename(name), k);
  for (int i = s.num_fills; i < s.net.op_size(); ++i) {
    auto& op = c.Emit(s.net.op(i).type(), {}, {});
    const caffe2::DeviceOption device = op.device_option();  // the node's (the subgraph imports on CPU)
    op = s.net.op(i);
    if (device.device_type() != 0 || device.device_id() != 0) *op.mutable_device_option() = device;
    for (auto& n : *op.mutable_input()) n = rename(n);
    for (auto& o : *op.mutable_output()) {
      if (auto d = s.state.dims.find(o); d != s.state.dims.end()) c.SetDims(rename(o), d->second);
      o = rename(o);
    }
  }
}

std::string NodeName(const ConvertContext& c) {
  return c.op_type() + (c.node().name().empty() ? "" : " '" + c.node().name() + "'");
}

namespace {

// The names a subgraph reads and does not define, nested subgraphs included.
void FreeNames(const onnx::GraphProto& g, std::set<std::string>* out) {
  std::set<std::string> defined, used;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
    for (const auto& i : n.input()) used.insert(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) FreeNames(a.g(), &used);
      for (const auto& sub : a.graphs()) FreeNames(sub, &used);
    }
  }
  for (const auto& v : g.output()) used.insert(v.name());
  for (const auto& u : used)
    if (!u.empty() && !defined.count(u)) out->insert(u);
}

std::string NodeLabel(const onnx::NodeProto& n, int i) {
  return "node #" + std::to_string(i) + " (" + n.op_type() + (n.name().empty() ? "" : " '" + n.name() + "'") + ")";
}

void ConvertNodes(const onnx::GraphProto& g, ImportState& st, int64_t opset, const std::string& where) {
  const ConverterRegistry& registry = Converters();
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    const std::string label = where + ", " + NodeLabel(node, i);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw Error(ErrorKind::kUnsupported, label + ": only the default ONNX domain (ai.onnx) is supported");
    const Converter* convert = registry.Find(node.op_type(), opset);
    if (!convert)
      throw Error(ErrorKind::kUnsupported, label + ": " + node.op_type() + " (opset " + std::to_string(opset) +
                                               ") has no converter");
    ConvertContext ctx(st, node, opset, caffe2::DeviceOption());
    try {
      (*convert)(ctx);
      ctx.FoldIfConstant();
      ctx.Commit();
    } catch (Error& e) {
      if (e.kind() == ErrorKind::kUnsupported && e.context().empty())
        throw Error(ErrorKind::kUnsupported, label + ": " + e.message());
      throw e.AddContext("in " + label);
    }
  }
}

void SetDeclared(const onnx::ValueInfoProto& v, ImportState& st) {
  if (v.type().has_sequence_type() || v.type().has_optional_type()) st.non_tensors.insert(v.name());
  if (!v.type().has_tensor_type()) return;
  const auto& t = v.type().tensor_type();
  if (t.elem_type() != 0) {
    st.dtypes[v.name()] = DtypeFromOnnx(t.elem_type());
    st.onnx_dtypes[v.name()] = t.elem_type();
  }
  if (!t.has_shape()) return;
  std::vector<int64_t> dims;
  for (const auto& d : t.shape().dim()) dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
  st.dims[v.name()] = dims;
}

}  // namespace

std::unique_ptr<Subnet> ConvertSubgraph(ConvertContext& c, const std::string& attr, const std::vector<LocalInfo>& locals) {
  const onnx::AttributeProto* a = c.Attr(attr);
  const std::string node = NodeName(c);
  HN_CHECK_KIND(kInvalidArgument, a, node, ": the subgraph attribute '", attr, "' is missing");
  HN_CHECK_KIND(kInvalidArgument, a->type() == onnx::AttributeProto::GRAPH && a->has_g(), node, ": attribute '", attr,
                "' must be a graph");
  const onnx::GraphProto& g = a->g();
  ImportState& outer = c.state();
  auto sub = std::make_unique<Subnet>();
  sub->attr = attr;
  ImportState& st = sub->state;
  st.names = outer.names;
  st.fresh_counter = outer.fresh_counter;
  st.base_dir = outer.base_dir;
  st.dims = outer.dims;
  st.dtypes = outer.dtypes;
  st.onnx_dtypes = outer.onnx_dtypes;
  st.non_tensors = outer.non_tensors;
  std::set<std::string> free;
  FreeNames(g, &free);
  for (const auto& name : free) {
    auto k = outer.consts.find(name);
    if (k != outer.consts.end()) st.consts.insert(*k);
  }
  caffe2::NetDef ops, scratch;
  st.predict_net = &ops;
  st.init_net = &scratch;
  const std::string where = "subgraph '" + attr + "' of " + node;
  for (int i = 0; i < g.input_size(); ++i) {
    const std::string& name = g.input(i).name();
    HN_CHECK_KIND(kInvalidArgument, !name.empty(), where, ": input ", i, " has no name");
    st.consts.erase(name);
    st.dims.erase(name);
    st.dtypes.erase(name);
    st.onnx_dtypes.erase(name);
    st.non_tensors.erase(name);
    if (i < static_cast<int>(locals.size())) {
      if (locals[i].dims) st.dims[name] = *locals[i].dims;
      st.dtypes[name] = locals[i].dtype;
    }
    SetDeclared(g.input(i), st);
    st.names.insert(name);
    sub->net.add_external_input(name);
  }
  for (const auto& v : g.value_info()) SetDeclared(v, st);
  for (const auto& t : g.initializer()) {
    HN_CHECK_KIND(kInvalidArgument, !t.name().empty(), where, ": an initializer has no name");
    ConstTensor k = ConstFromOnnx(t, st.base_dir, t.name());
    st.dims[t.name()] = k.dims;
    st.consts[t.name()] = std::move(k);
    st.names.insert(t.name());
    st.const_order.emplace_back(t.name(), caffe2::DeviceOption());
  }
  for (const auto& n : g.node())
    for (const auto& o : n.output()) st.names.insert(o);
  ConvertNodes(g, st, c.opset(), where);

  std::set<std::string> used, made(sub->net.external_input().begin(), sub->net.external_input().end());
  for (const auto& v : g.output()) {
    HN_CHECK_KIND(kInvalidArgument, !v.name().empty(), where, ": an output has no name");
    sub->net.add_external_output(v.name());
    used.insert(v.name());
  }
  for (const auto& op : ops.op())
    for (const auto& i : op.input()) used.insert(i);
  std::set<std::string> filled;
  for (const auto& [name, device] : st.const_order) {
    if (!used.count(name) || !filled.insert(name).second) continue;
    AppendFill(&sub->net, name, st.consts.at(name), device);
    sub->consts.emplace_back(name, st.consts.at(name));
    made.insert(name);
  }
  sub->num_fills = sub->net.op_size();
  for (auto& op : *ops.mutable_op()) {
    for (const auto& o : op.output()) made.insert(o);
    *sub->net.add_op() = std::move(op);
  }
  for (const auto& name : made)
    if (outer.names.count(name)) sub->inlinable = false;
  for (const auto& name : used) {
    if (made.count(name)) continue;
    HN_CHECK_KIND(kInvalidArgument, outer.names.count(name), where, " reads '", name,
                  "', which neither the subgraph nor an outer graph defines");
    sub->outer.push_back(name);
  }
  for (const auto& v : g.output()) {
    auto d = st.dims.find(v.name());
    sub->out_dims.push_back(d == st.dims.end() ? nullptr : &d->second);
    auto k = st.consts.find(v.name());
    sub->out_consts.push_back(k == st.consts.end() ? nullptr : &k->second);
    auto t = st.dtypes.find(v.name());
    sub->out_dtypes.push_back(k != st.consts.end() ? k->second.dtype
                              : t == st.dtypes.end() ? caffe2::TensorProto::UNDEFINED : t->second);
  }
  sub->net.set_name(c.node().name().empty() ? c.op_type() + "_" + attr : c.node().name() + "_" + attr);
  outer.names = st.names;
  outer.fresh_counter = st.fresh_counter;
  return sub;
}

}  // namespace hetnet::onnxio
