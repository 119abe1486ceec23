#include "operators/onnx_subgraph.h"

#include <cstring>

#include "core/error.h"

namespace hetnet {

namespace {

const caffe2::NetDef& NetArgument(const caffe2::OperatorDef& def, const std::string& name) {
  for (const auto& a : def.arg())
    if (a.name() == name) {
      HN_CHECK_KIND(kInvalidArgument, a.has_n(), def.type(), " '", def.name(), "': argument '", name,
                    "' must be a NetDef (the imported subgraph)");
      return a.n();
    }
  HN_THROW(kInvalidArgument, def.type(), " '", def.name(), "' has no subgraph: the NetDef argument '", name,
           "' is missing");
}

}  // namespace

OnnxSubgraph::OnnxSubgraph(const OperatorBase& op, Workspace* ws, const std::string& arg, int first_outer)
    : op_(op), arg_(arg), child_(std::make_unique<Workspace>(ws)) {
  const caffe2::OperatorDef& def = op.def();
  const caffe2::NetDef& net = NetArgument(def, arg);
  for (const auto& name : net.external_input()) {
    Blob* b = child_->CreateBlob(name);
    b->GetMutableTensor(Device::CPU());
    locals_.push_back(b);
  }
  HN_CHECK_KIND(kInvalidArgument, first_outer >= 0 && first_outer <= def.input_size(), def.type(), " '", def.name(),
                "': its arguments name ", first_outer, " inputs before the outer ones, it has ", def.input_size());
  const auto outer = op.GetRepeatedArgument<std::string>("outer_inputs");
  HN_CHECK_KIND(kInvalidArgument, static_cast<int>(outer.size()) == def.input_size() - first_outer, def.type(), " '",
                def.name(), "': arg outer_inputs names ", outer.size(), " blobs, the operator has ",
                def.input_size() - first_outer, " outer inputs");
  for (size_t k = 0; k < outer.size(); ++k)
    if (outer[k] != def.input(first_outer + static_cast<int>(k)))
      renamed_.emplace_back(child_->CreateBlob(outer[k]), first_outer + static_cast<int>(k));
  outputs_.assign(net.external_output().begin(), net.external_output().end());
  try {
    net_ = CreateNetFromDef(net, child_.get());
  } catch (Error& e) {
    throw e.AddContext(MakeString("creating subgraph '", arg, "' of ", def.type(), " '", def.name(), "'"));
  }
}

void OnnxSubgraph::Run() {
  for (auto& [blob, index] : renamed_) {
    if (op_.InputBlob(index)->IsTensor() || op_.InputBlob(index)->empty())
      blob->GetMutableTensor(Device::CPU())->ShareData(op_.InputTensor(index));
    else
      *blob = *op_.InputBlob(index);  // a sequence / optional: never written in place, shared
  }
  try {
    net_->Run();
  } catch (Error& e) {
    throw e.AddContext(MakeString("running subgraph '", arg_, "' of ", op_.type(), " '", op_.def().name(), "'"));
  }
}

const Tensor& OnnxSubgraph::Output(int i) const {
  const std::string& name = outputs_.at(i);
  const Blob* b = child_->GetBlob(name);
  HN_CHECK_KIND(kInvalidArgument, b && !b->empty() && b->IsTensor() && b->GetTensor().initialized(), op_.type(), " '",
                op_.def().name(), "': output ", i, " ('", name, "') of subgraph '", arg_, "' holds no tensor");
  return b->GetTensor();
}

const Blob& OnnxSubgraph::OutputValue(int i) const {
  const std::string& name = outputs_.at(i);
  const Blob* b = child_->GetBlob(name);
  HN_CHECK_KIND(kInvalidArgument, b && !b->empty(), op_.type(), " '", op_.def().name(), "': output ", i, " ('", name,
                "') of subgraph '", arg_, "' holds nothing");
  if (b->IsTensor()) Output(i);  // one with data
  return *b;
}

int OnnxCountArg(const OperatorBase& op, const std::string& name) {
  const auto v = op.GetSingleArgument<int64_t>(name, 0);
  HN_CHECK_KIND(kInvalidArgument, v >= 0 && v <= (int64_t{1} << 20), op.type(), " '", op.def().name(), "': ", name, " ",
                v, " is out of range");
  return static_cast<int>(v);
}

bool ReadOnnxCondition(const OperatorBase& op, const Tensor& t, const std::string& what) {
  HN_CHECK_KIND(kInvalidArgument, t.dtype() == DataType::Bool, op.type(), " '", op.def().name(), "': ", what,
                " must be a bool tensor, got ", DataTypeName(t.dtype()));
  HN_CHECK_KIND(kInvalidArgument, t.numel() == 1, op.type(), " '", op.def().name(), "': ", what,
                " must hold one value, it has ", t.numel());
  return t.data<bool>()[0];
}

void CopyOnnxElements(const Tensor& src, int64_t src_offset, Tensor* dst, int64_t dst_offset, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::String) {
    const auto* s = src.data<std::string>() + src_offset;
    auto* d = static_cast<std::string*>(dst->raw_mutable_data(DataType::String)) + dst_offset;
    for (int64_t k = 0; k < count; ++k) d[k] = s[k];
    return;
  }
  const size_t item = src.itemsize();
  const auto* s = static_cast<const char*>(src.raw_data()) + src_offset * item;
  auto* d = static_cast<char*>(dst->raw_mutable_data(src.dtype())) + dst_offset * item;
  std::memcpy(d, s, static_cast<size_t>(count) * item);
}

void SliceOnnxAxis(const Tensor& x, int axis, int64_t index, Tensor* out) {
  std::vector<int64_t> shape = x.shape();
  const int64_t length = shape.at(axis);
  shape.erase(shape.begin() + axis);
  out->Resize(shape);
  out->raw_mutable_data(x.dtype());
  const int64_t outer = x.size_to_dim(axis), inner = x.size_from_dim(axis + 1);
  for (int64_t o = 0; o < outer; ++o) CopyOnnxElements(x, (o * length + index) * inner, out, o * inner, inner);
}

void StackOnnxParts(const OperatorBase& op, const std::vector<Tensor>& parts, int axis, bool reverse,
                    const std::string& what, Tensor* out) {
  if (parts.empty()) {  // no iteration: an empty tensor (the element shape is unknown)
    out->Resize({0});
    out->raw_mutable_data(out->dtype() == DataType::Undefined ? DataType::Float : out->dtype());
    return;
  }
  const Tensor& first = parts[0];
  for (size_t t = 1; t < parts.size(); ++t)
    HN_CHECK_KIND(kInvalidArgument, parts[t].shape() == first.shape() && parts[t].dtype() == first.dtype(), op.type(),
                  " '", op.def().name(), "': ", what, " has shape ", ShapeToString(parts[t].shape()), " ",
                  DataTypeName(parts[t].dtype()), " at iteration ", t, " but ", ShapeToString(first.shape()), " ",
                  DataTypeName(first.dtype()), " at iteration 0 (scan outputs must keep one shape)");
  HN_CHECK_KIND(kInvalidArgument, axis >= 0 && axis <= first.ndim(), op.type(), " '", op.def().name(), "': ", what,
                " axis ", axis, " is out of range for rank ", first.ndim() + 1);
  std::vector<int64_t> shape = first.shape();
  const auto n = static_cast<int64_t>(parts.size());
  shape.insert(shape.begin() + axis, n);
  out->Resize(shape);
  out->raw_mutable_data(first.dtype());
  const int64_t outer = first.size_to_dim(axis), inner = first.size_from_dim(axis);
  for (int64_t t = 0; t < n; ++t) {
    const Tensor& p = parts[reverse ? n - 1 - t : t];
    for (int64_t o = 0; o < outer; ++o) CopyOnnxElements(p, o * inner, out, (o * n + t) * inner, inner);
  }
}

}  // namespace hetnet
