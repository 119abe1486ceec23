// The conversion context and the converter registry (onnx_context.h).
#include "onnx/onnx_context.h"

#include <algorithm>
#include <mutex>

namespace hetnet::onnxio {

ConvertContext::ConvertContext(ImportState& state, const onnx::NodeProto& node, int64_t opset,
                               caffe2::DeviceOption device)
    : state_(state), node_(node), opset_(opset), device_(std::move(device)) {}

const std::string& ConvertContext::in(int i) const {
  static const std::string kNone;
  return i < node_.input_size() ? node_.input(i) : kNone;
}

const std::string& ConvertContext::out(int i) const {
  static const std::string kNone;
  return i < node_.output_size() ? node_.output(i) : kNone;
}

const onnx::AttributeProto* ConvertContext::Attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool ConvertContext::Has(const std::string& name) const { return Attr(name) != nullptr; }

namespace {
void CheckType(const onnx::AttributeProto* a, onnx::AttributeProto::AttributeType want, const ConvertContext& c) {
  HN_CHECK_KIND(kInvalidArgument, a->type() == want || a->type() == onnx::AttributeProto::UNDEFINED, c.op_type(),
                " attribute '", a->name(), "' has type ", onnx::AttributeProto::AttributeType_Name(a->type()),
                ", expected ", onnx::AttributeProto::AttributeType_Name(want));
}
}  // namespace

int64_t ConvertContext::Int(const std::string& name, int64_t def) const {
  const auto* a = Attr(name);
  if (!a) return def;
  CheckType(a, onnx::AttributeProto::INT, *this);
  return a->i();
}

float ConvertContext::Float(const std::string& name, float def) const {
  const auto* a = Attr(name);
  if (!a) return def;
  CheckType(a, onnx::AttributeProto::FLOAT, *this);
  return a->f();
}

std::string ConvertContext::Str(const std::string& name, const std::string& def) const {
  const auto* a = Attr(name);
  if (!a) return def;
  CheckType(a, onnx::AttributeProto::STRING, *this);
  return a->s();
}

std::vector<int64_t> ConvertContext::Ints(const std::string& name) const {
  const auto* a = Attr(name);
  if (!a) return {};
  CheckType(a, onnx::AttributeProto::INTS, *this);
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> ConvertContext::Floats(const std::string& name) const {
  const auto* a = Attr(name);
  if (!a) return {};
  CheckType(a, onnx::AttributeProto::FLOATS, *this);
  return {a->floats().begin(), a->floats().end()};
}

const ConstTensor* ConvertContext::Const(const std::string& blob) const {
  for (const auto& [name, c] : new_consts_)
    if (name == blob) return &c;
  auto it = state_.consts.find(blob);
  return it == state_.consts.end() ? nullptr : &it->second;
}

const ConstTensor& ConvertContext::RequireConst(int i, const std::string& what) const {
  const ConstTensor* c = Const(in(i));
  if (!c) Refuse(what + " (input '" + in(i) + "') must be an initializer or Constant, known at import time");
  return *c;
}

std::string ConvertContext::Fresh(const std::string& base) {
  std::string name;
  do {
    name = base + "__onnx" + std::to_string(state_.fresh_counter++);
  } while (state_.names.count(name));
  state_.names.insert(name);
  return name;
}

std::string ConvertContext::AddConst(const std::string& hint, ConstTensor c) {
  const std::string name = Fresh(hint);
  DefineConst(name, std::move(c));
  return name;
}

void ConvertContext::DefineConst(const std::string& name, ConstTensor c) {
  new_dims_[name] = c.dims;
  new_consts_.emplace_back(name, std::move(c));
}

const std::vector<int64_t>* ConvertContext::Dims(const std::string& blob) const {
  auto n = new_dims_.find(blob);
  if (n != new_dims_.end()) return &n->second;
  auto it = state_.dims.find(blob);
  return it == state_.dims.end() ? nullptr : &it->second;
}

caffe2::TensorProto::DataType ConvertContext::Dtype(const std::string& blob) const {
  if (const ConstTensor* k = Const(blob)) return k->dtype;
  auto it = state_.dtypes.find(blob);
  return it == state_.dtypes.end() ? caffe2::TensorProto::UNDEFINED : it->second;
}

int32_t ConvertContext::OnnxDtype(const std::string& blob) const {
  auto it = state_.onnx_dtypes.find(blob);
  return it == state_.onnx_dtypes.end() ? 0 : it->second;
}

int ConvertContext::Rank(const std::string& blob) const {
  const auto* d = Dims(blob);
  return d ? static_cast<int>(d->size()) : -1;
}

void ConvertContext::SetDims(const std::string& blob, std::vector<int64_t> dims) {
  if (!blob.empty()) new_dims_[blob] = std::move(dims);
}

void ConvertContext::SetRank(const std::string& blob, int rank) {
  if (rank >= 0) SetDims(blob, std::vector<int64_t>(rank, -1));
}

void ConvertContext::SameDims(const std::string& to, const std::string& from) {
  if (const auto* d = Dims(from)) SetDims(to, *d);
}

int64_t ConvertContext::Axis(int64_t axis, int rank, const std::string& what) const {
  constexpr int64_t kMaxRank = 64;  // bounds what an axis may size while the rank is unknown
  HN_CHECK_KIND(kInvalidArgument, axis >= -kMaxRank && axis < kMaxRank, op_type(), ": ", what, " ", axis,
                " is out of range");
  if (axis < 0) {
    if (rank < 0) Refuse(what + " " + std::to_string(axis) + " is negative and the input's rank is unknown");
    axis += rank;
  }
  HN_CHECK_KIND(kInvalidArgument, axis >= 0 && (rank < 0 || axis < rank), op_type(), ": ", what, " out of range for rank ",
                rank);
  return axis;
}

caffe2::OperatorDef& ConvertContext::Emit(const std::string& type, const std::vector<std::string>& inputs,
                                          const std::vector<std::string>& outputs) {
  ops_.emplace_back();
  caffe2::OperatorDef& op = ops_.back();
  op.set_type(type);
  for (const auto& i : inputs) op.add_input(i);
  for (const auto& o : outputs) op.add_output(o);
  if (!node_.name().empty()) op.set_name(node_.name());
  if (device_.device_type() != 0 || device_.device_id() != 0) *op.mutable_device_option() = device_;
  return op;
}

void ConvertContext::Refuse(const std::string& reason) const { throw Error(ErrorKind::kUnsupported, reason); }

void ConvertContext::Commit() {
  for (auto& op : ops_) *state_.predict_net->add_op() = std::move(op);
  for (auto& [name, c] : new_consts_) {
    state_.const_order.emplace_back(name, device_);
    state_.names.insert(name);
    state_.consts[name] = std::move(c);
  }
  for (auto& [name, d] : new_dims_) state_.dims[name] = std::move(d);
  ops_.clear();
  new_consts_.clear();
  new_dims_.clear();
}

void ConverterRegistry::Add(const std::string& op_type, int64_t since, int64_t until, Converter fn) {
  entries_[op_type].push_back(Entry{since, until, std::move(fn)});
}

const Converter* ConverterRegistry::Find(const std::string& op_type, int64_t opset) const {
  auto it = entries_.find(op_type);
  if (it == entries_.end()) return nullptr;
  for (const auto& e : it->second)
    if (opset >= e.since && opset <= e.until) return &e.fn;
  return nullptr;
}

std::vector<std::string> ConverterRegistry::OpTypes() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries_) out.push_back(k);
  return out;
}

const ConverterRegistry& Converters() {
  static const ConverterRegistry* registry = [] {
    auto* r = new ConverterRegistry;
    RegisterSequenceConverters(*r);
    RegisterMathConverters(*r);
    RegisterNnConverters(*r);
    RegisterConvConverters(*r);
    RegisterTensorConverters(*r);
    RegisterShapeConverters(*r);
    RegisterActivationConverters(*r);
    RegisterNormConverters(*r);
    RegisterDropoutConverters(*r);
    RegisterFlexAttentionConverters(*r);
    RegisterTrainingConverters(*r);
    RegisterMlConverters(*r);
    RegisterResizeConverters(*r);
    RegisterControlFlowConverters(*r);
    return r;
  }();
  return *registry;
}

}  // namespace hetnet::onnxio
