// Ceil ... Atanh, IsNaN, IsInf (see float_unary_ops.h).
#include "operators/float_unary_ops.h"

#include <cmath>

#include "core/half.h"
#include "operators/cpu_chunked.h"

namespace hetnet {

namespace {

template <typename T, typename G>
void Map(int64_t n, const T* x, T* y, G g) {
  CpuChunked(n, [&](int64_t o, int64_t k) {
    for (int64_t i = o; i < o + k; ++i) y[i] = g(x[i]);
  });
}

}  // namespace

template <typename T>
void ApplyFloatFn(FloatFn f, int64_t n, const T* x, T* y) {
  switch (f) {
    case FloatFn::kCeil: return Map(n, x, y, [](T v) { return std::ceil(v); });
    case FloatFn::kFloor: return Map(n, x, y, [](T v) { return std::floor(v); });
    case FloatFn::kRound: return Map(n, x, y, [](T v) { return std::nearbyint(v); });  // ties to even
    case FloatFn::kSin: return Map(n, x, y, [](T v) { return std::sin(v); });
    case FloatFn::kCos: return Map(n, x, y, [](T v) { return std::cos(v); });
    case FloatFn::kTan: return Map(n, x, y, [](T v) { return std::tan(v); });
    case FloatFn::kAsin: return Map(n, x, y, [](T v) { return std::asin(v); });
    case FloatFn::kAcos: return Map(n, x, y, [](T v) { return std::acos(v); });
    case FloatFn::kAtan: return Map(n, x, y, [](T v) { return std::atan(v); });
    case FloatFn::kSinh: return Map(n, x, y, [](T v) { return std::sinh(v); });
    case FloatFn::kCosh: return Map(n, x, y, [](T v) { return std::cosh(v); });
    case FloatFn::kAsinh: return Map(n, x, y, [](T v) { return std::asinh(v); });
    case FloatFn::kAcosh: return Map(n, x, y, [](T v) { return std::acosh(v); });
    case FloatFn::kAtanh: return Map(n, x, y, [](T v) { return std::atanh(v); });
  }
}
template void ApplyFloatFn<float>(FloatFn, int64_t, const float*, float*);
template void ApplyFloatFn<double>(FloatFn, int64_t, const double*, double*);

template <FloatFn F>
void FloatUnaryOp<F>::RunOnDevice() {
  const Tensor& X = Input(0);
  Tensor* Y = Output(0, X.shape(), X.dtype());
  if (X.dtype() == DataType::Float) return ApplyFloatFn(F, X.numel(), X.data<float>(), Y->mutable_data<float>());
  if (X.dtype() == DataType::Double) return ApplyFloatFn(F, X.numel(), X.data<double>(), Y->mutable_data<double>());
  HN_THROW(kInvalidArgument, type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(X.dtype()),
           "; float32 or float64 is required");
}

template <bool IsInf>
FloatPredicateOp<IsInf>::FloatPredicateOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      positive_(GetSingleArgument<int>("detect_positive", 1) != 0),
      negative_(GetSingleArgument<int>("detect_negative", 1) != 0) {}

template <bool IsInf>
void FloatPredicateOp<IsInf>::RunOnDevice() {
  const Tensor& X = Input(0);
  Tensor* Y = Output(0, X.shape(), DataType::Bool);
  bool* y = Y->mutable_data<bool>();
  auto test = [&](auto x, auto to_double) {
    for (int64_t i = 0; i < X.numel(); ++i) {
      const double v = to_double(x[i]);
      y[i] = IsInf ? (std::isinf(v) && (v > 0 ? positive_ : negative_)) : std::isnan(v);
    }
  };
  switch (X.dtype()) {
    case DataType::Float: return test(X.data<float>(), [](float v) { return static_cast<double>(v); });
    case DataType::Double: return test(X.data<double>(), [](double v) { return v; });
    case DataType::Float16: return test(X.data<Half>(), [](Half v) { return static_cast<double>(HalfToFloat(v)); });
    default:
      HN_THROW(kInvalidArgument, type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(X.dtype()),
               "; float16, float32 or float64 is required");
  }
}

namespace {
std::vector<TensorInfo> BoolLikeInput(const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
  return {in[0].known ? TensorInfo::Of(in[0].dims, DataType::Bool) : TensorInfo::Unknown()};
}
}  // namespace

#define HN_FLOAT_UNARY(Name, Fn, What)                                                                  \
  OPERATOR_SCHEMA(Name).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape().SetDoc( \
      "Y = " What ", elementwise (ONNX's " #Name "), float32 or float64; C's libm results (NaN outside "   \
      "the domain). CPU only; no gradient.");                                                         \
  REGISTER_CPU_OPERATOR(Name, FloatUnaryOp<FloatFn::Fn>);
HN_FLOAT_UNARY(Ceil, kCeil, "ceil(X)")
HN_FLOAT_UNARY(Floor, kFloor, "floor(X)")
HN_FLOAT_UNARY(Round, kRound, "X rounded to the nearest integer, halves to even")
HN_FLOAT_UNARY(Sin, kSin, "sin(X)")
HN_FLOAT_UNARY(Cos, kCos, "cos(X)")
HN_FLOAT_UNARY(Tan, kTan, "tan(X)")
HN_FLOAT_UNARY(Asin, kAsin, "asin(X)")
HN_FLOAT_UNARY(Acos, kAcos, "acos(X)")
HN_FLOAT_UNARY(Atan, kAtan, "atan(X)")
HN_FLOAT_UNARY(Sinh, kSinh, "sinh(X)")
HN_FLOAT_UNARY(Cosh, kCosh, "cosh(X)")
HN_FLOAT_UNARY(Asinh, kAsinh, "asinh(X)")
HN_FLOAT_UNARY(Acosh, kAcosh, "acosh(X)")
HN_FLOAT_UNARY(Atanh, kAtanh, "atanh(X)")
#undef HN_FLOAT_UNARY

OPERATOR_SCHEMA(IsNaN).NumInputs(1).NumOutputs(1).TensorInference(BoolLikeInput)
    .SetDoc("Y = isnan(X), elementwise, bool out (ONNX's IsNaN); X float16, float32 or float64. CPU only.");
OPERATOR_SCHEMA(IsInf).NumInputs(1).NumOutputs(1).TensorInference(BoolLikeInput)
    .SetDoc("Y = X is +Inf (when arg detect_positive, default 1) or -Inf (detect_negative, default 1), "
            "elementwise, bool out (ONNX's IsInf); X float16, float32 or float64. CPU only.");
REGISTER_CPU_OPERATOR(IsNaN, FloatPredicateOp<false>);
REGISTER_CPU_OPERATOR(IsInf, FloatPredicateOp<true>);

}  // namespace hetnet
