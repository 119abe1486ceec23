// ExportOnnxModel: Caffe2 NetDefs -> ONNX ModelProto.
//
// 1. The init net runs on CPU in a private Workspace; the blobs the predict net reads become
//    initializers with their dtypes (random fills and GivenTensorFill alike).
// 2. The predict net runs once, operator by operator, on zeros of the value_info shapes. That is the
//    honest way to know every blob's dtype and shape (including in-place rewrites and the outputs'
//    dtypes) with the runtime's own rules rather than a second copy of them here.
// 3. Caffe2 blobs may be rewritten (in place); ONNX values are written once. Each write gets its own
//    ONNX name: the last write of a blob keeps the blob's name, so graph outputs keep theirs.
// 4. Each operator goes through the exporter registered for its type (export_*.cc); every missing
//    exporter and refused argument form is collected into one kUnsupported error.
#include "onnx/onnx_export.h"

#include <cstring>
#include <memory>
#include <set>

#include "core/error.h"
#include "core/workspace.h"
#include "onnx/export_context.h"

namespace hetnet::onnxio {

using namespace exporter;

namespace {

const ExporterTable& Exporters() {
  static const ExporterTable table = [] {
    ExporterTable t;
    AddNnExporters(t);
    AddActivationExporters(t);
    AddArithmeticExporters(t);
    AddShapeExporters(t);
    AddLossExporters(t);
    return t;
  }();
  return table;
}

// The IR version that goes with an ai.onnx opset (onnx/helper.py's VERSION_TABLE).
int64_t IrVersionForOpset(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  return 8;
}

// The net with every device set to CPU and engines dropped; random_seed stays, so a seeded random
// fill exports the values it gives anywhere else.
void ToCpu(caffe2::DeviceOption* d) {
  d->clear_device_type();
  d->clear_device_id();
  d->clear_hip_gpu_id();
  d->clear_node_name();
  d->clear_numa_node_id();
}
caffe2::NetDef OnCpu(const caffe2::NetDef& net) {
  caffe2::NetDef cpu = net;
  if (cpu.has_device_option()) ToCpu(cpu.mutable_device_option());
  for (auto& op : *cpu.mutable_op()) {
    if (op.has_device_option()) ToCpu(op.mutable_device_option());
    op.clear_engine();
  }
  return cpu;
}

BlobFacts FactsOf(const Workspace& ws, const std::string& blob) {
  const Blob* b = ws.GetBlob(blob);
  if (!b || !b->IsTensor()) return {};
  return {b->GetTensor().shape(), b->GetTensor().dtype()};
}

void SetValueInfo(onnx::ValueInfoProto* vi, const std::string& name, const BlobFacts& f) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(OnnxElemType(f.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : f.shape) shape->add_dim()->set_dim_value(d);
}

// Per operator: its blobs' facts from the reference run; weights: the init net's values the predict net reads.
struct ReferenceRun {
  std::vector<std::vector<BlobFacts>> in, out;  // for the operators that ran
  std::unique_ptr<Error> failure;               // why the next operator could not run, if one failed
  std::map<std::string, Tensor> weights;  // predict-net reads the init net fills (copies)
};

ReferenceRun RunReference(const caffe2::NetDef& predict, const caffe2::NetDef& init,
                          const std::map<std::string, OnnxExportValueInfo>& value_info) {
  const std::string net_name = "predict net '" + predict.name() + "'";
  ReferenceRun r;
  Workspace ws;
  try {
    ws.RunNetOnce(OnCpu(init));
  } catch (Error& e) {
    throw e.AddContext("while running init net '" + init.name() + "' on CPU for the ONNX initializers");
  }
  std::set<std::string> read;
  for (const auto& op : predict.op())
    for (const auto& i : op.input()) read.insert(i);
  for (const auto& name : read) {
    const Blob* b = ws.GetBlob(name);
    if (value_info.count(name) || !b || !b->IsTensor()) continue;
    Tensor copy;
    copy.CopyFrom(b->GetTensor());
    r.weights.emplace(name, std::move(copy));
  }
  for (const auto& [name, vi] : value_info) {
    for (int64_t d : vi.dims)
      HN_ENFORCE(d >= 0, "value_info of '", name, "': dims ", ShapeToString(vi.dims), " must be >= 0 (ONNX export "
                 "needs concrete shapes to run the net once)");
    try {
      Tensor* t = ws.CreateBlob(name)->GetMutableTensor(Device::CPU());
      t->Resize(vi.dims);
      const DataType dt = HetnetDataType(vi.elem_type);
      void* p = t->raw_mutable_data(dt);
      if (dt != DataType::String && t->nbytes() > 0) std::memset(p, 0, t->nbytes());
    } catch (Error& e) {
      throw e.AddContext("making the zero input '" + name + "' from its value_info for the ONNX export's reference run");
    }
  }
  // External inputs no operator reads (a deploy net's leftover "label") need no value_info.
  for (const auto& name : predict.external_input())
    HN_CHECK_KIND(kInvalidArgument, !read.count(name) || value_info.count(name) || ws.HasBlob(name), net_name,
                  ": external input '", name, "' is neither in value_info nor filled by init net '", init.name(), "'");
  const caffe2::NetDef cpu = OnCpu(predict);
  for (int i = 0; i < cpu.op_size(); ++i) {
    const auto& op = cpu.op(i);
    std::vector<BlobFacts> in;
    for (const auto& name : op.input()) in.push_back(FactsOf(ws, name));
    try {
      ws.RunOperatorOnce(op);
    } catch (Error& e) {
      // Kept, not thrown: the operators before this one are still checked for unsupported forms.
      e.AddContext(MakeString("in ", net_name, ", operator #", i, " (", op.type(),
                              "), run once on CPU on zeros of the value_info shapes to learn dtypes and shapes"));
      r.failure = std::make_unique<Error>(e);
      break;
    }
    std::vector<BlobFacts> out;
    for (const auto& name : op.output()) out.push_back(FactsOf(ws, name));
    r.in.push_back(std::move(in));
    r.out.push_back(std::move(out));
  }
  return r;
}

// ONNX names for every operator input and output (single assignment), and which outputs are used.
struct Naming {
  std::vector<std::vector<std::string>> in, out;
  std::vector<std::vector<bool>> out_used;
};

Naming NameValues(const caffe2::NetDef& predict, const std::set<std::string>& defined, GraphBuilder& g) {
  Naming nm;
  std::map<std::string, int> writes_left;
  for (const auto& op : predict.op())
    for (const auto& o : op.output()) ++writes_left[o];
  const std::set<std::string> outputs(predict.external_output().begin(), predict.external_output().end());
  std::map<std::string, std::string> current;
  std::map<std::string, std::pair<int, int>> writer;  // current ONNX value -> (op, output)
  for (const auto& d : defined) current[d] = d;
  for (int i = 0; i < predict.op_size(); ++i) {
    const auto& op = predict.op(i);
    std::vector<std::string> in;
    for (const auto& b : op.input()) {
      auto it = current.find(b);
      HN_CHECK_KIND(kInvalidArgument, it != current.end(), "predict net '", predict.name(), "', operator #", i, " (",
                    op.type(), ") reads '", b, "' before anything writes it");
      in.push_back(it->second);
      auto w = writer.find(it->second);
      if (w != writer.end()) nm.out_used[w->second.first][w->second.second] = true;
    }
    std::vector<std::string> out;
    for (int j = 0; j < op.output_size(); ++j) {
      const std::string& b = op.output(j);
      const bool last = --writes_left[b] == 0;
      // The last write keeps the blob's name unless a graph input or initializer already has it.
      std::string name = last && !defined.count(b) ? b : g.Fresh(b + "_w" + std::to_string(i));
      if (last && defined.count(b) && outputs.count(b))
        HN_THROW(kUnsupported, "external output '", b, "' is a graph input or weight rewritten by operator #", i, " (",
                 op.type(), "); ONNX values are written once");
      current[b] = name;
      writer[name] = {i, j};
      out.push_back(name);
    }
    nm.in.push_back(std::move(in));
    nm.out.push_back(std::move(out));
    nm.out_used.emplace_back(op.output_size(), false);
  }
  for (const auto& b : predict.external_output()) {
    auto it = current.find(b);
    HN_CHECK_KIND(kInvalidArgument, it != current.end(), "predict net '", predict.name(), "': external output '", b,
                  "' is never written");
    auto w = writer.find(it->second);
    if (w != writer.end()) nm.out_used[w->second.first][w->second.second] = true;
  }
  return nm;
}

// Drops initializers no node reads (a weight an exporter replaced by a reshaped copy), and their
// graph inputs under IR version 3.
void PruneUnusedInitializers(onnx::GraphProto* graph) {
  std::set<std::string> read;
  for (const auto& n : graph->node()) read.insert(n.input().begin(), n.input().end());
  std::set<std::string> dropped;
  auto* inits = graph->mutable_initializer();
  for (int k = inits->size() - 1; k >= 0; --k) {
    if (read.count(inits->Get(k).name())) continue;
    dropped.insert(inits->Get(k).name());
    inits->DeleteSubrange(k, 1);
  }
  auto* inputs = graph->mutable_input();
  for (int k = inputs->size() - 1; k >= 0; --k)
    if (dropped.count(inputs->Get(k).name())) inputs->DeleteSubrange(k, 1);
}

std::string JoinUnsupported(const std::map<std::string, std::vector<int>>& forms, int64_t opset) {
  std::string msg = MakeString("cannot export to ONNX (opset ", opset, "): ", forms.size(),
                               " operator form(s) have no ONNX export:");
  for (const auto& [form, ops] : forms) {
    msg += "\n  " + form + " (operator";
    for (size_t k = 0; k < ops.size() && k < 8; ++k) msg += MakeString(k ? ", #" : " #", ops[k]);
    if (ops.size() > 8) msg += MakeString(", ... ", ops.size(), " in all");
    msg += ")";
  }
  return msg;
}

}  // namespace

std::string ExportOnnxModel(const caffe2::NetDef& predict_net, const caffe2::NetDef& init_net,
                            const std::map<std::string, OnnxExportValueInfo>& value_info,
                            const OnnxExportOptions& options) {
  HN_CHECK_KIND(kUnsupported, options.opset >= 7 && options.opset <= 17, "ONNX export: opset ", options.opset,
                " is not supported (7 to 17)");
  const ExporterTable& table = Exporters();
  std::map<std::string, std::vector<int>> unsupported;  // form -> operator indices
  for (int i = 0; i < predict_net.op_size(); ++i)
    if (!table.count(predict_net.op(i).type())) unsupported[predict_net.op(i).type() + " (no exporter)"].push_back(i);

  ReferenceRun ref = RunReference(predict_net, init_net, value_info);
  const int ran = static_cast<int>(ref.in.size());

  onnx::ModelProto model;
  model.set_ir_version(IrVersionForOpset(options.opset));
  model.set_producer_name(options.producer_name);
  model.set_producer_version("1");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(predict_net.name().empty() ? "hetnet_graph" : predict_net.name());

  std::set<std::string> reserved;  // every Caffe2 blob name, so temporaries never collide with one
  for (const auto* net : {&predict_net, &init_net})
    for (const auto& op : net->op()) {
      reserved.insert(op.input().begin(), op.input().end());
      reserved.insert(op.output().begin(), op.output().end());
    }
  reserved.insert(predict_net.external_input().begin(), predict_net.external_input().end());
  reserved.insert(predict_net.external_output().begin(), predict_net.external_output().end());
  GraphBuilder g(graph, options.opset, reserved);

  // Graph inputs: value_info entries, in the predict net's external_input order first.
  std::set<std::string> defined;
  std::vector<std::string> input_order(predict_net.external_input().begin(), predict_net.external_input().end());
  for (const auto& [name, vi] : value_info) input_order.push_back(name);
  for (const auto& name : input_order) {
    auto it = value_info.find(name);
    if (it == value_info.end() || defined.count(name)) continue;
    SetValueInfo(graph->add_input(), name, {it->second.dims, HetnetDataType(it->second.elem_type)});
    defined.insert(name);
  }
  for (const auto& [name, t] : ref.weights) {
    g.AddInitializer(name, t);
    // IR version 3 (opsets 7, 8) wants every initializer listed among the graph inputs too.
    if (model.ir_version() < 4) SetValueInfo(graph->add_input(), name, {t.shape(), t.dtype()});
    defined.insert(name);
  }

  const Naming nm = NameValues(predict_net, defined, g);
  for (int i = 0; i < ran; ++i) {
    const auto& def = predict_net.op(i);
    auto fn = table.find(def.type());
    if (fn == table.end()) continue;  // listed above
    OpExport op{def, ArgumentHelper(def), g, nm.in[i], nm.out[i], ref.in[i], ref.out[i], nm.out_used[i], {}};
    for (int k = 0; k < def.input_size(); ++k) {  // an initializer only while no operator has rewritten it
      auto w = ref.weights.find(def.input(k));
      op.weights.push_back(w != ref.weights.end() && nm.in[i][k] == def.input(k) ? &w->second : nullptr);
    }
    const int first_node = graph->node_size();
    try {
      fn->second(op);
    } catch (Error& e) {
      if (e.kind() == ErrorKind::kUnsupported) {
        const std::string& m = e.message();
        unsupported[m.rfind(def.type() + " (", 0) == 0 ? m : def.type() + " (" + m + ")"].push_back(i);
        continue;
      }
      throw e.AddContext(MakeString("exporting predict net '", predict_net.name(), "', operator #", i, " (",
                                    def.type(), ")"));
    }
    // Node names say which Caffe2 operator they came from.
    for (int k = first_node; k < graph->node_size(); ++k) {
      const std::string part = k > first_node ? "_" + std::to_string(k - first_node) : "";
      graph->mutable_node(k)->set_name(MakeString(def.type(), "_", i, part));
    }
  }
  if (!unsupported.empty()) {
    std::string msg = JoinUnsupported(unsupported, options.opset);
    if (ref.failure)
      msg += MakeString("\n(argument forms of operator #", ran, " on were not checked: running it failed: ",
                        ref.failure->message(), ")");
    HN_THROW(kUnsupported, msg);
  }
  if (ref.failure) throw *ref.failure;
  PruneUnusedInitializers(graph);

  for (const auto& name : predict_net.external_output()) {
    BlobFacts f;
    for (int i = predict_net.op_size() - 1; i >= 0 && f.dtype == DataType::Undefined; --i)
      for (int j = 0; j < predict_net.op(i).output_size(); ++j)
        if (predict_net.op(i).output(j) == name) f = ref.out[i][j];
    HN_CHECK_KIND(kInvalidArgument, f.dtype != DataType::Undefined, "predict net '", predict_net.name(),
                  "': external output '", name, "' is not written by any operator (or not as a tensor); an "
                  "ONNX graph output must be computed by a node");
    SetValueInfo(graph->add_output(), name, f);
  }
  std::string bytes;
  HN_CHECK_KIND(kRuntime, model.SerializeToString(&bytes), "ONNX export: could not serialize the ModelProto");
  return bytes;
}

}  // namespace hetnet::onnxio
