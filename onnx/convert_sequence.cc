// Converters of ONNX's sequence and optional values onto the CPU operators of
// operators/onnx_sequence_ops.h (a blob holds a TensorSequence or, for an empty optional, an
// OptionalNone). The importer records which blobs hold such values (ImportState::non_tensors: graph
// inputs, outputs and value_info of sequence / optional type, and these converters' outputs), so
// that Identity on one copies the value (OnnxValueCopy) instead of a tensor. The operators run on
// CPU whatever the node's device (the runtime copies the tensors they read or make). SequenceMap's
// body imports as control flow's subgraphs do (onnx_subgraph_import.h) onto OnnxSequenceMap.
#include "onnx/onnx_subgraph_import.h"

namespace hetnet::onnxio {

namespace {

bool NonTensor(ConvertContext& c, int i) { return c.has_in(i) && c.state().non_tensors.count(c.in(i)) > 0; }

// Emits `type` on CPU with the node's present inputs (an omitted optional input ends the list).
caffe2::OperatorDef& EmitCpu(ConvertContext& c, const std::string& type, bool non_tensor_out) {
  std::vector<std::string> inputs;
  for (int i = 0; i < c.num_inputs() && c.has_in(i); ++i) inputs.push_back(c.in(i));
  const std::string out = c.has_out(0) ? c.out(0) : c.Fresh(c.op_type() + "_unused");
  auto& op = c.Emit(type, inputs, {out});
  op.clear_device_option();
  if (non_tensor_out) c.state().non_tensors.insert(out);
  return op;
}

void Sequence(ConverterRegistry& r, const char* onnx_type, bool sequence_out,
              std::function<void(ConvertContext&, caffe2::OperatorDef&)> args = nullptr) {
  r.Add(onnx_type, 11, kNewestOpset, [=](ConvertContext& c) {
    auto& op = EmitCpu(c, onnx_type, sequence_out);
    if (args) args(c, op);
  });
}

void SequenceMap(ConvertContext& c) {
  const std::string node = NodeName(c);
  HN_CHECK_KIND(kInvalidArgument, c.num_inputs() >= 1 && c.has_in(0), node, ": the input sequence is missing");
  std::vector<LocalInfo> locals;
  std::vector<std::string> inputs;
  for (int i = 0; i < c.num_inputs(); ++i) {
    HN_CHECK_KIND(kInvalidArgument, c.has_in(i), node, ": input ", i, " is empty");
    inputs.push_back(c.in(i));
    const bool seq = i == 0 || NonTensor(c, i);  // an element: nothing known unless the body declares it
    locals.push_back(seq ? LocalInfo{} : LocalInfo{c.Dims(c.in(i)), c.Dtype(c.in(i))});
  }
  auto body = ConvertSubgraph(c, "body", locals);
  HN_CHECK_KIND(kInvalidArgument, body->net.external_input_size() == c.num_inputs() &&
                    body->net.external_output_size() == c.num_outputs(),
                node, ": the body has ", body->net.external_input_size(), " inputs and ",
                body->net.external_output_size(), " outputs, expected ", c.num_inputs(), " and ", c.num_outputs(),
                " (one per SequenceMap input and output)");
  auto& op = EmitControl(c, "OnnxSequenceMap", inputs, {body.get()});
  AddArg(op, "num_inputs", int64_t{c.num_inputs()});
  std::vector<int64_t> dtypes;
  for (auto d : body->out_dtypes) dtypes.push_back(static_cast<int64_t>(d));
  AddArg(op, "output_dtypes", dtypes);
  AddNetArg(op, "body", body->net);
  for (const auto& o : op.output()) c.state().non_tensors.insert(o);
}

}  // namespace

void RegisterSequenceConverters(ConverterRegistry& r) {
  r.Add("Identity", [](ConvertContext& c) {
    if (!NonTensor(c, 0)) {  // a tensor: as convert_math's unary ops
      c.Emit("StopGradient", {c.in(0)}, {c.out(0)});
      c.SameDims(c.out(0), c.in(0));
      return;
    }
    EmitCpu(c, "OnnxValueCopy", true);
  });
  Sequence(r, "SequenceConstruct", true);
  Sequence(r, "SequenceEmpty", true, [](ConvertContext& c, caffe2::OperatorDef& op) {
    const int64_t onnx_dtype = c.Int("dtype", 1);  // FLOAT
    const auto dtype = DtypeFromOnnx(static_cast<int32_t>(onnx_dtype));
    if (dtype == caffe2::TensorProto::UNDEFINED)
      c.Refuse(std::string("dtype ") + OnnxTypeName(static_cast<int32_t>(onnx_dtype)) + " has no hetnet tensor type");
    AddArg(op, "dtype", static_cast<int64_t>(dtype));
  });
  Sequence(r, "SequenceAt", false);
  Sequence(r, "SequenceLength", false, [](ConvertContext& c, caffe2::OperatorDef& op) {
    if (c.has_out(0)) c.SetDims(c.out(0), {});
  });
  Sequence(r, "SequenceInsert", true);
  Sequence(r, "SequenceErase", true);
  Sequence(r, "SplitToSequence", true, [](ConvertContext& c, caffe2::OperatorDef& op) {
    AddArg(op, "axis", c.Int("axis", 0));
    AddArg(op, "keepdims", c.Int("keepdims", 1));
  });
  Sequence(r, "ConcatFromSequence", false, [](ConvertContext& c, caffe2::OperatorDef& op) {
    HN_CHECK_KIND(kInvalidArgument, c.Has("axis"), c.op_type(), ": the attribute axis is required");
    AddArg(op, "axis", c.Int("axis", 0));
    AddArg(op, "new_axis", c.Int("new_axis", 0));
  });
  r.Add("Optional", 15, kNewestOpset, [](ConvertContext& c) { EmitCpu(c, "OnnxOptional", true); });
  r.Add("OptionalHasElement", 15, kNewestOpset, [](ConvertContext& c) {
    if (!c.has_in(0)) {  // no input: an empty optional, a constant false
      ConstTensor no;
      no.dtype = caffe2::TensorProto::BOOL;
      no.integer = {0};
      c.DefineConst(c.out(0), std::move(no));
      return;
    }
    EmitCpu(c, "OptionalHasElement", false);
    if (c.has_out(0)) c.SetDims(c.out(0), {});
  });
  r.Add("SequenceMap", 17, kNewestOpset, SequenceMap);
  // The value may be a sequence (an optional sequence): Identity then copies it as a value.
  r.Add("OptionalGetElement", 15, kNewestOpset,
        [](ConvertContext& c) { EmitCpu(c, "OptionalGetElement", NonTensor(c, 0)); });
}

}  // namespace hetnet::onnxio
