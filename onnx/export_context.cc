// The pieces every exporter shares: dtype numbers, the graph builder, attribute setters.
#include "onnx/export_context.h"

#include <cstring>
#include <type_traits>

#include "core/error.h"

namespace hetnet::onnxio::exporter {

namespace {
// hetnet dtype -> ONNX TensorProto.DataType (Caffe2's BYTE is uint8 data).
constexpr std::pair<DataType, int32_t> kElemTypes[] = {
    {DataType::Float, onnx::TensorProto::FLOAT},   {DataType::Double, onnx::TensorProto::DOUBLE},
    {DataType::Float16, onnx::TensorProto::FLOAT16}, {DataType::Int8, onnx::TensorProto::INT8},
    {DataType::UInt8, onnx::TensorProto::UINT8},   {DataType::Byte, onnx::TensorProto::UINT8},
    {DataType::Int16, onnx::TensorProto::INT16},   {DataType::UInt16, onnx::TensorProto::UINT16},
    {DataType::Int32, onnx::TensorProto::INT32},   {DataType::Int64, onnx::TensorProto::INT64},
    {DataType::Bool, onnx::TensorProto::BOOL},     {DataType::String, onnx::TensorProto::STRING},
    {DataType::UInt32, onnx::TensorProto::UINT32}, {DataType::UInt64, onnx::TensorProto::UINT64},
    {DataType::BFloat16, onnx::TensorProto::BFLOAT16},
};
}  // namespace

int32_t OnnxElemType(DataType t) {
  for (const auto& [h, o] : kElemTypes)
    if (h == t) return o;
  HN_THROW(kUnsupported, "dtype ", DataTypeName(t), " has no ONNX element type");
}

DataType HetnetDataType(int32_t elem_type) {
  for (const auto& [h, o] : kElemTypes)
    if (o == elem_type && h != DataType::Byte) return h;
  HN_THROW(kUnsupported, "ONNX element type ", elem_type, " has no hetnet dtype (supported: float, double, float16, "
           "bfloat16, int8/16/32/64, uint8/16/32/64, bool, string)");
}

std::string GraphBuilder::Fresh(const std::string& hint) {
  std::string name = hint;
  for (int i = 1; used_.count(name); ++i) name = hint + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

onnx::NodeProto* GraphBuilder::Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = graph_->add_node();
  n->set_op_type(op_type);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

std::string GraphBuilder::Int64s(const std::string& hint, const std::vector<int64_t>& values) {
  Tensor t({static_cast<int64_t>(values.size())}, DataType::Int64);
  if (!values.empty()) std::memcpy(t.mutable_data<int64_t>(), values.data(), values.size() * sizeof(int64_t));
  const std::string name = Fresh(hint);
  AddInitializer(name, t);
  return name;
}

std::string GraphBuilder::Scalar(const std::string& hint, DataType dtype, double value) {
  Tensor t(std::vector<int64_t>{}, dtype);
  DispatchDataType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::string>) {
      HN_THROW(kUnsupported, "a numeric constant of dtype string");
    } else if constexpr (std::is_same_v<T, Half>) {
      *t.mutable_data<T>() = FloatToHalf(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      *t.mutable_data<T>() = FloatToBFloat16(static_cast<float>(value));
    } else {
      *t.mutable_data<T>() = static_cast<T>(value);
    }
  });
  const std::string name = Fresh(hint);
  AddInitializer(name, t);
  return name;
}

void GraphBuilder::AddInitializer(const std::string& name, const Tensor& t) {
  onnx::TensorProto* p = graph_->add_initializer();
  p->set_name(name);
  p->set_data_type(OnnxElemType(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  if (t.dtype() == DataType::String) {
    const std::string* s = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) p->add_string_data(s[i]);
    return;
  }
  // hetnet stores elements little-endian in host order (x86/ARM), as raw_data wants; bool is 1 byte.
  p->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()));
}

void SetAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void SetAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void OpExport::Unsupported(const std::string& form) const { HN_THROW(kUnsupported, def.type(), " (", form, ")"); }

void OpExport::RequireUnused(int i, const std::string& what) const {
  if (i < static_cast<int>(out_used.size()) && out_used[i])
    Unsupported("output " + std::to_string(i) + " '" + def.output(i) + "' (" + what + ") is used");
}

onnx::NodeProto* OpExport::AxesNode(const std::string& op_type, const std::string& x, const std::string& y,
                                    const std::vector<int64_t>& axes) {
  onnx::NodeProto* n = g.Node(op_type, {x}, {y});
  if (axes.empty()) return n;  // Squeeze: every dim of size 1
  if (opset() >= 13) {
    n->add_input(g.Int64s(y + "_axes", axes));
  } else {
    SetAttr(n, "axes", axes);
  }
  return n;
}

onnx::NodeProto* OpExport::ReshapeTo(const std::string& x, const std::string& y, const std::vector<int64_t>& shape) {
  return g.Node("Reshape", {x, g.Int64s(y + "_shape", shape)}, {y});
}

std::string OpExport::ReshapedInput(int i, const std::vector<int64_t>& shape, const std::string& what) {
  const std::string name = Temp(what);
  if (i < static_cast<int>(weights.size()) && weights[i]) {
    g.AddInitializer(name, weights[i]->View(shape));
  } else {
    ReshapeTo(in.at(i), name, shape);
  }
  return name;
}

}  // namespace hetnet::onnxio::exporter
