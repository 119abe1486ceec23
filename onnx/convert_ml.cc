// ai.onnx.ml LabelEncoder (onto OnnxLabelEncoder, operators/onnx_label_encoder_op.h; tensor-valued
// attributes become the op's list arguments), TreeEnsemble (onto OnnxTreeEnsemble,
// operators/onnx_tree_ensemble_op.h), ArrayFeatureExtractor (Gather along the last axis) and Binarizer
// (GT then Cast).
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

void AddStrings(caffe2::OperatorDef& op, const std::string& name, const std::vector<std::string>& v) {
  auto* a = op.add_arg();
  a->set_name(name);
  for (const auto& s : v) a->add_strings(s);
}

// keys_* / values_* / default_* of one role ("keys", "values", "default") onto the op's arguments;
// returns the caffe2 dtype of a tensor-valued attribute (UNDEFINED otherwise).
caffe2::TensorProto::DataType CopyRole(ConvertContext& c, caffe2::OperatorDef& op, const std::string& role) {
  const bool single = role == "default";
  for (const char* kind : {"strings", "int64s", "floats"}) {
    // default_string / default_int64 / default_float; keys_strings, values_int64s, ...
    const std::string k(kind), attr = role + "_" + (single ? k.substr(0, k.size() - 1) : k);
    const onnx::AttributeProto* a = c.Attr(attr);
    if (!a) continue;
    auto* arg = op.add_arg();
    arg->set_name(attr);
    if (single) {
      if (a->type() == onnx::AttributeProto::STRING) arg->set_s(a->s());
      else if (a->type() == onnx::AttributeProto::INT) arg->set_i(a->i());
      else arg->set_f(a->f());
    } else {
      for (const auto& s : a->strings()) arg->add_strings(s);
      for (int64_t v : a->ints()) arg->add_ints(v);
      for (float v : a->floats()) arg->add_floats(v);
    }
  }
  const onnx::AttributeProto* t = c.Attr(role + "_tensor");
  if (!t) return caffe2::TensorProto::UNDEFINED;
  const ConstTensor k = ConstFromOnnx(t->t(), "", role + "_tensor");
  if (single && k.numel() != 1) c.Refuse(role + "_tensor must hold one value");
  const std::string base = single ? "default_" : role + "_";
  if (!k.text.empty()) {
    if (single) {
      auto* a = op.add_arg();
      a->set_name("default_string");
      a->set_s(k.text[0]);
    } else {
      AddStrings(op, base + "strings", k.text);
    }
  } else if (k.is_real()) {
    if (single) AddArgF(op, "default_float", static_cast<float>(k.real[0]));
    else {
      auto* a = op.add_arg();
      a->set_name(base + "floats");
      for (double v : k.real) a->add_floats(static_cast<float>(v));
    }
  } else {
    if (single) AddArg(op, "default_int64", k.integer[0]);
    else AddArg(op, base + "int64s", k.integer);
  }
  return k.dtype;
}

void LabelEncoder(ConvertContext& c) {
  auto& op = c.Emit("OnnxLabelEncoder", {c.in(0)}, {c.out(0)});
  CopyRole(c, op, "keys");
  const auto value_dtype = CopyRole(c, op, "values");
  const auto default_dtype = CopyRole(c, op, "default");
  const auto dt = value_dtype != caffe2::TensorProto::UNDEFINED ? value_dtype : default_dtype;
  if (dt != caffe2::TensorProto::UNDEFINED) AddArg(op, "value_dtype", static_cast<int64_t>(dt));
  c.SameDims(c.out(0), c.in(0));
}

// Binarizer: 1 where X > threshold, else 0, in X's dtype.
void Binarizer(ConvertContext& c) {
  const auto dt = c.Dtype(c.in(0));
  if (dt != caffe2::TensorProto::UNDEFINED && dt != caffe2::TensorProto::FLOAT && dt != caffe2::TensorProto::DOUBLE)
    c.Refuse("only float32 and float64 inputs are supported");
  ConstTensor k = ConstTensor::Float({}, {c.Float("threshold", 0.f)});
  if (dt == caffe2::TensorProto::DOUBLE) k.dtype = caffe2::TensorProto::DOUBLE;  // compared in X's dtype
  const std::string t = c.AddConst(c.out(0) + "_threshold", std::move(k));
  const std::string above = c.Fresh(c.out(0) + "_above");
  c.Emit("GT", {c.in(0), t}, {above});
  AddArg(c.Emit("Cast", {above}, {c.out(0)}), "to",
         static_cast<int64_t>(dt == caffe2::TensorProto::DOUBLE ? caffe2::TensorProto::DOUBLE : caffe2::TensorProto::FLOAT));
  c.SameDims(c.out(0), c.in(0));
}

// TreeEnsemble (opset 5): the tensor attributes (splits, leaf weights, membership values) become
// constant inputs in their own dtype, nodes_modes and the INTS attributes the op's arguments.
void TreeEnsemble(ConvertContext& c) {
  auto tensor_input = [&](const char* attr, bool required) -> std::string {
    const onnx::AttributeProto* a = c.Attr(attr);
    if (!a) {
      if (required) c.Refuse(std::string(attr) + " is required");
      return "";
    }
    return c.AddConst(c.out(0) + "_" + attr, ConstFromOnnx(a->t(), "", attr));
  };
  std::vector<std::string> ins{c.in(0), tensor_input("nodes_splits", true), tensor_input("leaf_weights", true)};
  const std::string members = tensor_input("membership_values", false);
  if (!members.empty()) ins.push_back(members);
  auto& op = c.Emit("OnnxTreeEnsemble", ins, {c.out(0)});
  for (const char* a : {"nodes_featureids", "nodes_truenodeids", "nodes_trueleafs", "nodes_falsenodeids",
                        "nodes_falseleafs", "nodes_missing_value_tracks_true", "leaf_targetids", "tree_roots"})
    if (c.Has(a)) AddArg(op, a, c.Ints(a));
  if (const onnx::AttributeProto* m = c.Attr("nodes_modes"))
    AddArg(op, "nodes_modes", ConstFromOnnx(m->t(), "", "nodes_modes").Ints("nodes_modes"));
  for (const char* a : {"aggregate_function", "n_targets", "post_transform"})
    if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
}

void ArrayFeatureExtractor(ConvertContext& c) {
  const int rank = c.Rank(c.in(0));
  if (rank < 1) c.Refuse("X's rank must be known (the indices select along its last axis)");
  AddArg(c.Emit("Gather", {c.in(0), c.in(1)}, {c.out(0)}), "axis", int64_t{rank - 1});
}

}  // namespace

void RegisterMlConverters(ConverterRegistry& r) {
  r.Add("ai.onnx.ml::LabelEncoder", LabelEncoder);
  r.Add("ai.onnx.ml::ArrayFeatureExtractor", ArrayFeatureExtractor);
  r.Add("ai.onnx.ml::Binarizer", Binarizer);
  r.Add("ai.onnx.ml::TreeEnsemble", TreeEnsemble);
}

}  // namespace hetnet::onnxio
