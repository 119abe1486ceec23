#include "operators/range_onehot_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/argument.h"
#include "core/checked_size.h"
#include "operators/cnn_op_utils.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

void RangeOp::RunOnDevice() {
  const DataType t = Input(0).dtype();
  for (int i = 1; i < 3; ++i)
    HN_ENFORCE(Input(i).dtype() == t, type(), ": input ", i, " ('", def().input(i), "') is ",
               DataTypeName(Input(i).dtype()), " but input 0 ('", def().input(0), "') is ", DataTypeName(t),
               "; start, limit and delta must have one dtype");
  HN_ENFORCE(t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16 ||
                 t == DataType::Int16 || t == DataType::Int32 || t == DataType::Int64,
             type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(t),
             "; float16, bfloat16, float32, float64, int16, int32 or int64 is required");
  const double start = ScalarInput(*this, 0), limit = ScalarInput(*this, 1), delta = ScalarInput(*this, 2);
  HN_ENFORCE(std::isfinite(start) && std::isfinite(limit) && std::isfinite(delta) && delta != 0, type(),
             ": start ('", def().input(0), "') = ", start, ", limit ('", def().input(1), "') = ", limit,
             ", delta ('", def().input(2), "') = ", delta, ": the values must be finite and delta non-zero");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  HN_ENFORCE(count <= static_cast<double>(kMaxElements), type(), ": start ", start, ", limit ", limit, ", delta ",
             delta, " give ", count, " elements, too many");
  const int64_t n = static_cast<int64_t>(count);
  Tensor* Y = Output(0, {n}, t);
  if (t == DataType::Float16 || t == DataType::BFloat16) {  // start + i * delta in float32, rounded once
    const float s0 = static_cast<float>(start), d = static_cast<float>(delta);
    char* y = static_cast<char*>(Y->raw_mutable_data(t));
    for (int64_t i = 0; i < n; ++i) EncodeAs(*this, t, s0 + static_cast<float>(i) * d, y + i * Y->itemsize());
    return;
  }
  DispatchArithmetic(*this, t, 0, [&](auto zero) {
    using T = decltype(zero);
    const T s = Input(0).template data<T>()[0], d = Input(2).template data<T>()[0];
    T* y = Y->template mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(s + static_cast<T>(i) * d);
  });
}

void OneHotOp::RunOnDevice() {
  const Tensor &I = Input(0), &V = Input(2);
  const double depth_value = ScalarInput(*this, 1);
  HN_ENFORCE(depth_value >= 1 && depth_value <= static_cast<double>(kMaxElements), type(), ": depth (input 1, '",
             def().input(1), "') is ", depth_value, "; it must be at least 1");
  const int64_t depth = static_cast<int64_t>(depth_value);
  HN_ENFORCE(V.numel() == 2, type(), ": values (input 2, '", def().input(2), "') must hold [off, on], but has shape ",
             V.ShapeString());
  HN_ENFORCE(V.dtype() != DataType::String, type(), ": values (input 2, '", def().input(2), "') are strings");
  const int rank = I.ndim();
  const int64_t axis_arg = GetSingleArgument<int64_t>("axis", -1);
  HN_ENFORCE(axis_arg >= -rank - 1 && axis_arg <= rank, type(), ": axis ", axis_arg, " is out of range for the ",
             rank + 1, "-dim output (input 0, '", def().input(0), "', has ", rank, " dims)");
  const int axis = static_cast<int>(axis_arg < 0 ? axis_arg + rank + 1 : axis_arg);
  std::vector<int64_t> shape = I.shape();
  shape.insert(shape.begin() + axis, depth);
  CheckedNumel(shape, "OneHot output");
  Tensor* Y = Output(0, shape, V.dtype());
  const size_t item = V.itemsize();
  const char* off = static_cast<const char*>(V.raw_data());
  const char* on = off + item;
  char* y = static_cast<char*>(Y->raw_mutable_data(V.dtype()));
  const int64_t outer = ProdDims(I.shape(), 0, axis), inner = ProdDims(I.shape(), axis, rank);
  for (int64_t k = 0; k < Y->numel(); ++k) std::memcpy(y + k * item, off, item);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double v = ElementAsDouble(*this, I, 0, o * inner + i);
      if (!(v > -static_cast<double>(depth) - 1 && v < static_cast<double>(depth))) continue;  // NaN too
      int64_t hot = static_cast<int64_t>(std::trunc(v));
      if (hot < 0) hot += depth;
      if (hot < 0 || hot >= depth) continue;
      std::memcpy(y + ((o * depth + hot) * inner + i) * item, on, item);
    }
}

void EyeLikeOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.ndim() == 2, type(), ": input 0 ('", def().input(0), "') must be 2-D, but has shape ", X.ShapeString());
  const int dt = GetSingleArgument<int>("dtype", static_cast<int>(X.dtype()));
  HN_ENFORCE(IsKnownDataType(dt) && dt != static_cast<int>(DataType::String) && dt != 0, type(), ": arg dtype ", dt,
             " is not a numeric or bool data type");
  const DataType t = static_cast<DataType>(dt);
  const int64_t k = GetSingleArgument<int64_t>("k", 0);
  Tensor* Y = Output(0, X.shape(), t);
  const size_t item = Y->itemsize();
  char* y = static_cast<char*>(Y->raw_mutable_data(t));
  if (Y->numel() > 0) std::memset(y, 0, Y->numel() * item);
  char one[16] = {};
  EncodeAs(*this, t, 1.0, one);
  const int64_t rows = X.dim(0), cols = X.dim(1);
  if (k <= -rows || k >= cols) return;  // no diagonal element inside (k may be huge)
  for (int64_t r = std::max<int64_t>(0, -k); r < rows && r + k < cols; ++r)
    std::memcpy(y + (r * cols + r + k) * item, one, item);
}

OPERATOR_SCHEMA(Range).NumInputs(3).NumOutputs(1)
    .SetDoc("ONNX's Range(start, limit, delta) -> Y (1-D): start + i * delta while short of limit; one-element "
            "inputs of one dtype (float16, bfloat16, float32/64, int16/32/64). CPU only; no gradient.");
OPERATOR_SCHEMA(OneHot).NumInputs(3).NumOutputs(1)
    .SetDoc("ONNX's OneHot(indices, depth, values=[off, on]) -> Y: indices' shape with a dim of depth inserted at "
            "arg axis (default -1); on at each index (negative ones from the end), off elsewhere; indices outside "
            "[-depth, depth) give all off. Y has values' dtype. CPU only; no gradient.");
OPERATOR_SCHEMA(EyeLike).NumInputs(1).NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      const int dt = ArgumentHelper(def).GetSingleArgument<int>("dtype", static_cast<int>(in[0].dtype));
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, static_cast<DataType>(dt))};
    })
    .SetDoc("ONNX's EyeLike(X) -> Y: X's 2-D shape, ones on diagonal arg k (default 0), zeros elsewhere; arg dtype "
            "(a TensorProto data type) or X's dtype. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(Range, RangeOp);
REGISTER_CPU_OPERATOR(OneHot, OneHotOp);
REGISTER_CPU_OPERATOR(EyeLike, EyeLikeOp);

}  // namespace hetnet
