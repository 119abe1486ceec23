#include "operators/quantize_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/narrow_types.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

// The quantized types: 8/16/32-bit integers and the narrow ones (core/narrow_types.h) except E8M0.
bool QuantType(DataType t) {
  return t == DataType::Int8 || t == DataType::UInt8 || t == DataType::Int16 || t == DataType::UInt16 ||
         t == DataType::Int32 || (IsNarrowDataType(t) && t != kFloat8E8M0);
}
const char* const kQuantTypes = "int8, uint8, int16, uint16, int32, int4, uint4, int2, uint2, float8 or float4";

void QuantRange(DataType t, double* lo, double* hi) {
  if (IsNarrowInteger(t)) return NarrowIntegerRange(t, lo, hi);
  DispatchDataType(t, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
      *lo = static_cast<double>(std::numeric_limits<T>::lowest());
      *hi = static_cast<double>(std::numeric_limits<T>::max());
    }
  });
}

// For each element of X, the element of scale (and zero_point) it uses; checks their shapes.
std::vector<int64_t> ParamIndex(const OperatorBase& op, const Tensor& X) {
  const Tensor& S = op.InputTensor(1);
  const bool has_zp = op.InputSize() > 2 && !op.def().input(2).empty();
  auto one_value = [](const Tensor& t) { return t.numel() == 1 && t.ndim() <= 1; };  // [] and [1] alike
  if (has_zp && !(one_value(S) && one_value(op.InputTensor(2))))
    HN_ENFORCE(op.InputTensor(2).shape() == S.shape(), op.type(), ": zero_point (input 2, '", op.def().input(2),
               "') has shape ", op.InputTensor(2).ShapeString(), " but scale (input 1, '", op.def().input(1),
               "') has ", S.ShapeString());
  std::vector<int64_t> idx(X.numel(), 0);
  if (S.numel() == 1 && S.ndim() <= 1) return idx;
  const int r = X.ndim();
  const int64_t a = op.GetSingleArgument<int64_t>("axis", 1);
  HN_ENFORCE(a >= -r && a < r, op.type(), ": axis ", a, " is out of range for input 0 ('", op.def().input(0),
             "') with ", r, " dims");
  const int axis = static_cast<int>(a < 0 ? a + r : a);
  const int64_t block = op.GetSingleArgument<int64_t>("block_size", 0);
  std::vector<int64_t> sshape(r, 1);
  if (block <= 0) {
    HN_ENFORCE(S.ndim() == 1 && S.numel() == X.dim(axis), op.type(), ": scale (input 1, '", op.def().input(1),
               "') has shape ", S.ShapeString(), "; per-axis scales need [", X.dim(axis), "] (dim ", axis, ")");
    sshape[axis] = X.dim(axis);
  } else {
    sshape = X.shape();
    sshape[axis] = (X.dim(axis) + block - 1) / block;
    HN_ENFORCE(S.shape() == sshape, op.type(), ": scale (input 1, '", op.def().input(1), "') has shape ",
               S.ShapeString(), "; blocks of ", block, " along dim ", axis, " need ", ShapeToString(sshape));
  }
  for (int64_t k = 0; k < X.numel(); ++k) {
    int64_t rem = k, off = 0, stride = 1;
    for (int d = r - 1; d >= 0; --d) {
      int64_t c = rem % X.dim(d);
      rem /= X.dim(d);
      if (sshape[d] == 1 && X.dim(d) != 1) c = 0;
      if (block > 0 && d == axis) c /= block;
      off += c * stride;
      stride *= sshape[d];
    }
    idx[k] = off;
  }
  return idx;
}

// Element k of input i as double; narrow types by their exact value.
double ValueAt(const OperatorBase& op, const Tensor& t, int i, int64_t k) {
  if (IsNarrowDataType(t.dtype())) return NarrowToFloat(t.dtype(), static_cast<const uint8_t*>(t.raw_data())[k]);
  return ElementAsDouble(op, t, i, k);
}

double ZeroPoint(const OperatorBase& op, int64_t k) {
  if (op.InputSize() <= 2 || op.def().input(2).empty()) return 0.0;
  return ValueAt(op, op.InputTensor(2), 2, k);
}

// Integers: rint(x / s) with the division in float32 (single) or float64, then + zp, clamped, stored
// as t. Narrow floats, as ONNX's reference: float8 x / s (zero_point unused) converted with
// `saturate`; float4 x / s + zp, always saturating.
void Quantize(const OperatorBase& op, const Tensor& X, const std::vector<double>& scale, const std::vector<double>& zp,
              const std::vector<int64_t>& at, bool single, bool saturate, DataType t, Tensor* Y) {
  double lo = 0, hi = 0;
  if (!IsNarrowFloat(t)) QuantRange(t, &lo, &hi);
  char* y = static_cast<char*>(Y->raw_mutable_data(t));
  const size_t item = ItemSize(t);
  for (int64_t k = 0; k < X.numel(); ++k) {
    const double x = ElementAsDouble(op, X, 0, k), s = scale[at[k]];
    const double r = single ? static_cast<double>(static_cast<float>(x) / static_cast<float>(s)) : x / s;
    if (IsNarrowFloat(t)) {
      const double v = t == kFloat4E2M1 ? (single ? static_cast<float>(r + zp[at[k]]) : r + zp[at[k]]) : r;
      y[k] = static_cast<char>(NarrowFromDouble(t, v, saturate));
      continue;
    }
    const double q = std::nearbyint(r);
    double v = std::isnan(q) ? 0.0 : q + zp[at[k]];
    v = std::min(std::max(v, lo), hi);
    if (IsNarrowInteger(t)) {
      y[k] = static_cast<char>(NarrowFromInteger(t, static_cast<int64_t>(v)));
      continue;
    }
    char bytes[16] = {};
    EncodeAs(op, t, v, bytes);
    std::memcpy(y + k * item, bytes, item);
  }
}

std::vector<double> AllAsDouble(const OperatorBase& op, const Tensor& t, int i) {
  std::vector<double> v(t.numel());
  for (int64_t k = 0; k < t.numel(); ++k) v[k] = ElementAsDouble(op, t, i, k);
  return v;
}

void EnforceFloat(const OperatorBase& op, const Tensor& t, int i) {
  HN_ENFORCE(t.dtype() == DataType::Float || t.dtype() == DataType::Double || t.dtype() == DataType::Float16,
             op.type(), ": input ", i, " ('", op.def().input(i), "') is ", DataTypeName(t.dtype()),
             "; float16, float32 or float64 is required");
}

}  // namespace

void QuantizeLinearOp::RunOnDevice() {
  const Tensor &X = Input(0), &S = Input(1);
  EnforceFloat(*this, X, 0);
  EnforceFloat(*this, S, 1);
  const bool has_zp = InputSize() > 2 && !def().input(2).empty();
  const DataType t = has_zp ? Input(2).dtype()
                            : static_cast<DataType>(GetSingleArgument<int>("dtype", static_cast<int>(DataType::UInt8)));
  HN_ENFORCE(QuantType(t), type(), ": the quantized type ", has_zp ? "(zero_point's)" : "(arg dtype)", " is ",
             DataTypeName(t), "; ", kQuantTypes, " is required");
  const std::vector<int64_t> at = ParamIndex(*this, X);
  std::vector<double> zp(S.numel(), 0.0);
  for (int64_t k = 0; k < S.numel(); ++k) zp[k] = ZeroPoint(*this, k);
  Quantize(*this, X, AllAsDouble(*this, S, 1), zp, at, X.dtype() != DataType::Double,
           GetSingleArgument<int>("saturate", 1) != 0, t, Output(0, X.shape(), t));
}

void DequantizeLinearOp::RunOnDevice() {
  const Tensor &X = Input(0), &S = Input(1);
  HN_ENFORCE(QuantType(X.dtype()), type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(X.dtype()), "; ",
             kQuantTypes, " is required");
  EnforceFloat(*this, S, 1);
  const bool has_zp = InputSize() > 2 && !def().input(2).empty();
  if (has_zp)
    HN_ENFORCE(Input(2).dtype() == X.dtype(), type(), ": zero_point (input 2, '", def().input(2), "') is ",
               DataTypeName(Input(2).dtype()), " but input 0 is ", DataTypeName(X.dtype()));
  const DataType t = static_cast<DataType>(GetSingleArgument<int>("dtype", static_cast<int>(S.dtype())));
  HN_ENFORCE(t == DataType::Float || t == DataType::Double || t == DataType::Float16, type(), ": arg dtype ",
             DataTypeName(t), " is not float16, float32 or float64");
  const std::vector<int64_t> at = ParamIndex(*this, X);
  Tensor* Y = Output(0, X.shape(), t);
  char* y = static_cast<char*>(Y->raw_mutable_data(t));
  const size_t item = ItemSize(t);
  for (int64_t k = 0; k < X.numel(); ++k) {
    const double v = (ValueAt(*this, X, 0, k) - ZeroPoint(*this, at[k])) * ElementAsDouble(*this, S, 1, at[k]);
    char bytes[16] = {};
    EncodeAs(*this, t, S.dtype() == DataType::Double ? v : static_cast<double>(static_cast<float>(v)), bytes);
    std::memcpy(y + k * item, bytes, item);
  }
}

void DynamicQuantizeLinearOp::RunOnDevice() {
  const Tensor& X = Input(0);
  EnforceFloatInput(X, 0);
  float lo = 0, hi = 0;  // float32 throughout, as ONNX's reference
  const float* x = X.data<float>();
  for (int64_t k = 0; k < X.numel(); ++k) lo = std::min(lo, x[k]), hi = std::max(hi, x[k]);
  const float scale = (hi - lo) / 255.f;
  const double zp = scale == 0 ? 0.0 : std::min(255.0, std::max(0.0, std::nearbyint(static_cast<double>(-lo / scale))));
  Output(1, {}, DataType::Float)->mutable_data<float>()[0] = scale;
  Output(2, {}, DataType::UInt8)->mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  std::vector<int64_t> at(X.numel(), 0);
  Quantize(*this, X, {scale == 0 ? 1.0 : static_cast<double>(scale)}, {zp}, at, true, true, DataType::UInt8,
           Output(0, X.shape(), DataType::UInt8));
}

void DynamicQuantizeLinearOp::EnforceFloatInput(const Tensor& X, int i) const {
  HN_ENFORCE(X.dtype() == DataType::Float, type(), ": input ", i, " ('", def().input(i), "') is ",
             DataTypeName(X.dtype()), "; float32 is required");
}

OPERATOR_SCHEMA(QuantizeLinear).NumInputs(2, 3).NumOutputs(1)
    .SetDoc("ONNX's QuantizeLinear: Y = saturate(rint(X / scale) + zero_point), per tensor, per axis (arg axis) or "
            "blocked (arg block_size); Y int8/uint8/int16/uint16/int32, int4/uint4/int2/uint2, float8 or float4 (zero_point's "
            "dtype or arg dtype; arg saturate for float8). CPU only.");
OPERATOR_SCHEMA(DequantizeLinear).NumInputs(2, 3).NumOutputs(1)
    .SetDoc("ONNX's DequantizeLinear: Y = (X - zero_point) * scale, per tensor, per axis (arg axis) or blocked (arg "
            "block_size); Y has scale's dtype or arg dtype. CPU only.");
OPERATOR_SCHEMA(DynamicQuantizeLinear).NumInputs(1).NumOutputs(3)
    .SetDoc("ONNX's DynamicQuantizeLinear(X) -> Y (uint8), scale, zero_point from X's range (including 0). CPU only.");
REGISTER_CPU_OPERATOR(QuantizeLinear, QuantizeLinearOp);
REGISTER_CPU_OPERATOR(DequantizeLinear, DequantizeLinearOp);
REGISTER_CPU_OPERATOR(DynamicQuantizeLinear, DynamicQuantizeLinearOp);

}  // namespace hetnet
