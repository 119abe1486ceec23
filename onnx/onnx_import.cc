// ONNX ModelProto -> init NetDef + predict NetDef (onnx_import.h). The model is parsed with Debian's
// libonnx proto (ONNX 1.12: fields newer models add are kept as unknown fields); every node goes
// through the converter registry (onnx_context.h), and every node that cannot be imported is
// collected into one kUnsupported error.
#include "onnx/onnx_import.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <new>
#include <set>
#include <stdexcept>

#include "core/proto_io.h"
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

OnnxValueInfo ValueInfoOf(const onnx::ValueInfoProto& v) {
  OnnxValueInfo info;
  info.name = v.name();
  if (!v.type().has_tensor_type()) {
    info.known_rank = false;
    return info;
  }
  const auto& t = v.type().tensor_type();
  info.dtype = DtypeFromOnnx(t.elem_type());
  info.onnx_dtype = t.elem_type();
  if (!t.has_shape()) {
    info.known_rank = false;
    return info;
  }
  for (const auto& d : t.shape().dim()) info.dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
  return info;
}

// Marks blobs whose declared type is an ONNX sequence or optional (not a tensor).
void NoteNonTensor(const onnx::ValueInfoProto& v, ImportState& st) {
  if (v.type().has_sequence_type() || v.type().has_optional_type()) st.non_tensors.insert(v.name());
}

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Well-formed UTF-8 without NUL (what blob names may be: they reach Python and the NetDefs).
bool IsCleanUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (c == 0 || n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += n;
  }
  return true;
}

void CheckNames(const onnx::GraphProto& g, const std::string& where) {
  auto check = [&](const std::string& name, const char* what) {
    HN_CHECK_KIND(kInvalidArgument, IsCleanUtf8(name), where, ": ", what, " name is not valid UTF-8 (or holds NUL)");
  };
  for (const auto& v : g.input()) check(v.name(), "an input");
  for (const auto& v : g.output()) check(v.name(), "an output");
  for (const auto& v : g.value_info()) check(v.name(), "a value_info");
  for (const auto& t : g.initializer()) check(t.name(), "an initializer");
  for (const auto& n : g.node()) {
    check(n.name(), "a node");
    check(n.op_type(), "an op type");
    check(n.domain(), "a domain");
    for (const auto& i : n.input()) check(i, "a node input");
    for (const auto& o : n.output()) check(o, "a node output");
  }
}

// "Foo (opset 13)" or "Foo (opset 13): reason"; ops listed once each.
struct Refusals {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  void Add(const std::string& line) {
    if (seen.insert(line).second) lines.push_back(line);
  }
};

}  // namespace

bool IsOnnxPath(const std::string& path) {
  if (path.size() < 5) return false;
  std::string ext = path.substr(path.size() - 5);
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext == ".onnx";
}

namespace {
ImportedOnnxModel Import(const std::string& model_bytes, const OnnxImportOptions& options);
}  // namespace

ImportedOnnxModel ImportOnnxModel(const std::string& model_bytes, const OnnxImportOptions& options) {
  try {
    return Import(model_bytes, options);
  } catch (const std::bad_alloc&) {  // a size in the model beyond what the checks bound
    HN_THROW(kOutOfMemory, "ONNX model: out of memory while importing (a size in the model is too large)");
  } catch (const std::length_error&) {
    HN_THROW(kInvalidArgument, "ONNX model: a size in the model is too large");
  }
}

namespace {
ImportedOnnxModel Import(const std::string& model_bytes, const OnnxImportOptions& options) {
  onnx::ModelProto model;
  HN_CHECK_KIND(kInvalidArgument, !model_bytes.empty(), "ONNX model: the data is empty");
  CheckProtoParseMemory(model_bytes, onnx::ModelProto::descriptor(), "ONNX model");
  if (!model.ParseFromString(model_bytes))
    HN_THROW(kInvalidArgument, "ONNX model: the data is not a serialized ONNX ModelProto (", model_bytes.size(), " bytes)");
  HN_CHECK_KIND(kInvalidArgument, model.has_graph(), "ONNX model: no graph (is this an ONNX file?)");
  const onnx::GraphProto& graph = model.graph();

  ImportedOnnxModel out;
  out.ir_version = model.ir_version();
  out.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const auto& o : model.opset_import()) {
    HN_CHECK_KIND(kInvalidArgument, IsCleanUtf8(o.domain()), "ONNX model: an opset domain is not valid UTF-8");
    out.opsets[IsDefaultDomain(o.domain()) ? "" : o.domain()] = o.version();
  }
  // Before IR version 3 there was no opset_import: opset 1.
  const int64_t opset = out.opsets.count("") ? out.opsets[""] : 1;
  const std::string net_name =
      !options.net_name.empty() ? options.net_name : !graph.name().empty() ? graph.name() : "onnx_model";
  out.predict_net.set_name(net_name);
  out.init_net.set_name(net_name + "_init");

  ImportState st;
  st.init_net = &out.init_net;
  st.predict_net = &out.predict_net;
  st.base_dir = options.base_dir;
  HN_CHECK_KIND(kInvalidArgument, IsCleanUtf8(net_name), "ONNX model: the graph name is not valid UTF-8");
  const std::string where = "ONNX model '" + net_name + "'";
  CheckNames(graph, where);

  // Initializers are weights: known at import time.
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) {
    HN_CHECK_KIND(kInvalidArgument, !t.name().empty(), where, ": an initializer has no name");
    try {
      ConstTensor c = ConstFromOnnx(t, options.base_dir, t.name());
      st.dims[t.name()] = c.dims;
      st.consts[t.name()] = std::move(c);
    } catch (Error& e) {
      throw e.AddContext("in initializer '" + t.name() + "' of " + where);
    }
    initializers.insert(t.name());
    st.names.insert(t.name());
    st.const_order.emplace_back(t.name(), options.device);
  }
  HN_CHECK_KIND(kUnsupported, graph.sparse_initializer_size() == 0, where, ": sparse initializers are not supported");
  for (const auto& v : graph.input()) {
    st.names.insert(v.name());
    if (initializers.count(v.name())) continue;
    NoteNonTensor(v, st);
    OnnxValueInfo info = ValueInfoOf(v);
    if (info.known_rank) st.dims[v.name()] = info.dims;
    st.dtypes[v.name()] = info.dtype;
    st.onnx_dtypes[v.name()] = info.onnx_dtype;
    out.inputs.push_back(std::move(info));
  }
  for (const auto& v : graph.value_info()) {
    NoteNonTensor(v, st);
    OnnxValueInfo info = ValueInfoOf(v);
    if (info.known_rank && !st.dims.count(v.name())) st.dims[v.name()] = info.dims;
    st.dtypes.emplace(v.name(), info.dtype);
    st.onnx_dtypes.emplace(v.name(), info.onnx_dtype);
  }
  for (const auto& v : graph.output()) {
    NoteNonTensor(v, st);
    OnnxValueInfo info = ValueInfoOf(v);
    if (info.known_rank && !st.dims.count(v.name())) st.dims[v.name()] = info.dims;
    st.dtypes.emplace(v.name(), info.dtype);
    st.onnx_dtypes.emplace(v.name(), info.onnx_dtype);
    out.outputs.push_back(std::move(info));
  }
  for (const auto& n : graph.node())
    for (const auto& o : n.output()) st.names.insert(o);

  Refusals refused;
  const ConverterRegistry& registry = Converters();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    // An op of another domain converts only where a converter is registered as "<domain>::<op>"
    // (ai.onnx.preview::FlexAttention); it sees the default domain's opset (its subgraphs do).
    const std::string op_key = IsDefaultDomain(node.domain()) ? node.op_type() : node.domain() + "::" + node.op_type();
    if (!IsDefaultDomain(node.domain()) && !registry.Find(op_key, opset)) {
      const auto v = out.opsets.find(node.domain());
      refused.Add(node.domain() + "::" + node.op_type() + " (opset " +
                  (v == out.opsets.end() ? std::string("?") : std::to_string(v->second)) +
                  "): only the default ONNX domain (ai.onnx) is supported");
      continue;
    }
    const std::string label = node.op_type() + " (opset " + std::to_string(opset) + ")";
    const Converter* convert = registry.Find(op_key, opset);
    if (!convert) {
      const auto known = registry.OpTypes();
      const bool other_opset = std::binary_search(known.begin(), known.end(), node.op_type());
      refused.Add(label + (!other_opset ? std::string()
                           : opset > kNewestOpset ? ": newer than the newest opset the importer knows (" +
                                                        std::to_string(kNewestOpset) + ")"
                                                  : ": no converter for this opset"));
      continue;
    }
    caffe2::DeviceOption device = options.device;
    const std::string key = !node.name().empty() ? node.name() : node.output_size() ? node.output(0) : "";
    auto d = options.node_devices.find(key);
    if (d != options.node_devices.end()) device = d->second;
    ConvertContext ctx(st, node, opset, device);
    try {
      (*convert)(ctx);
      ctx.FoldIfConstant();
      ctx.Commit();
    } catch (Error& e) {
      if (e.kind() == ErrorKind::kUnsupported && e.context().empty()) {
        refused.Add(label + ": " + e.message());
        continue;
      }
      throw e.AddContext("in ONNX node #" + std::to_string(i) + " (" + node.op_type() +
                         (node.name().empty() ? "" : " '" + node.name() + "'") + ") of " + where);
    }
  }
  if (!refused.lines.empty()) {
    std::string msg = where + " cannot be imported: " + std::to_string(refused.lines.size()) +
                      " unsupported operator(s):";
    for (const auto& l : refused.lines) msg += "\n  - " + l;
    HN_THROW(kUnsupported, msg);
  }

  // The weights: constants the predict net reads or the graph outputs, filled by the init net.
  std::set<std::string> used;
  for (const auto& op : out.predict_net.op())
    for (const auto& in : op.input()) used.insert(in);
  for (const auto& v : graph.output()) used.insert(v.name());
  for (const auto& v : out.inputs) out.predict_net.add_external_input(v.name);
  std::set<std::string> filled;
  for (const auto& [name, device] : st.const_order) {
    if (!used.count(name) || !filled.insert(name).second) continue;
    AppendFill(&out.init_net, name, st.consts.at(name), device);
    out.init_net.add_external_output(name);
    out.predict_net.add_external_input(name);
  }
  for (const auto& v : graph.output()) out.predict_net.add_external_output(v.name());
  return out;
}
}  // namespace

ImportedOnnxModel ImportOnnxFile(const std::string& path, OnnxImportOptions options) {
  if (options.base_dir.empty()) {
    options.base_dir = std::filesystem::path(path).parent_path().string();
    if (options.base_dir.empty()) options.base_dir = ".";
  }
  const std::string bytes = ReadFileBytes(path);
  try {
    return ImportOnnxModel(bytes, options);
  } catch (Error& e) {
    throw e.AddContext("in ONNX file " + path);
  }
}

}  // namespace hetnet::onnxio
