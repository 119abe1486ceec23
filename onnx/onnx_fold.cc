// Import-time constant folding: a node whose inputs are all known at import time is run right away
// on CPU (its converted operators in a scratch workspace) and its outputs become constants. Shape
// arithmetic on constants (Shape -> Gather -> Concat -> Reshape / Slice / Expand), casts and
// reshapes of weights then cost nothing at run time, and the inputs that our operators need as
// constants (Slice's starts, Reshape's shape, axes) stay constants.
#include <type_traits>

#include "core/tensor.h"
#include "core/workspace.h"
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

constexpr int64_t kMaxFoldElements = int64_t{1} << 20;  // per input and per output (bounded work)

Tensor ToTensor(const ConstTensor& c) {
  Tensor t(c.dims, static_cast<DataType>(c.dtype));
  DispatchDataType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.raw_mutable_data(t.dtype()));
    for (int64_t i = 0; i < c.numel(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) p[i] = c.text[i];
      else if constexpr (std::is_same_v<T, Half>) p[i] = FloatToHalf(static_cast<float>(c.real[i]));
      else if constexpr (std::is_same_v<T, BFloat16>) p[i] = FloatToBFloat16(static_cast<float>(c.real[i]));
      else if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(c.real[i]);
      else p[i] = static_cast<T>(c.integer[i]);
    }
  });
  return t;
}

ConstTensor FromTensor(const Tensor& t) {
  ConstTensor c;
  c.dtype = static_cast<caffe2::TensorProto::DataType>(t.dtype());
  c.dims = t.shape();
  DispatchDataType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) c.text.push_back(p[i]);
      else if constexpr (std::is_same_v<T, Half>) c.real.push_back(HalfToFloat(p[i]));
      else if constexpr (std::is_same_v<T, BFloat16>) c.real.push_back(BFloat16ToFloat(p[i]));
      else if constexpr (std::is_floating_point_v<T>) c.real.push_back(p[i]);
      else c.integer.push_back(static_cast<int64_t>(p[i]));
    }
  });
  return c;
}

}  // namespace

bool ConvertContext::FoldIfConstant() {
  if (ops_.empty()) return false;
  for (int i = 0; i < node_.input_size(); ++i) {
    if (node_.input(i).empty()) continue;
    const ConstTensor* k = Const(node_.input(i));
    if (!k || k->numel() > kMaxFoldElements) return false;
  }
  try {
    Workspace ws;
    for (const auto& op : ops_)
      for (const auto& name : op.input()) {
        if (ws.HasBlob(name)) continue;
        const ConstTensor* k = Const(name);
        if (!k) continue;  // made by an earlier op of this node
        if (k->numel() > kMaxFoldElements) return false;
        *ws.CreateBlob(name)->GetMutable<Tensor>() = ToTensor(*k);
      }
    for (auto op : ops_) {  // on CPU, whatever the node's device
      op.clear_device_option();
      ws.RunOperatorOnce(op);
    }
    std::vector<std::pair<std::string, ConstTensor>> outs;
    for (const auto& name : node_.output()) {
      if (name.empty()) continue;
      const Blob* b = ws.GetBlob(name);
      if (!b || !b->IsTensor() || b->GetTensor().numel() > kMaxFoldElements) return false;
      outs.emplace_back(name, FromTensor(b->GetTensor()));
    }
    ops_.clear();
    for (auto& [name, c] : outs) DefineConst(name, std::move(c));
    return true;
  } catch (const std::exception&) {  // hetnet::Error or allocation failure
    return false;  // not foldable here (the run-time net reports any real error)
  }
}

}  // namespace hetnet::onnxio
