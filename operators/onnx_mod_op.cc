#include "operators/onnx_mod_op.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "device/broadcast.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

template <typename T>
T ModOne(T a, T b, bool c_fmod) {
  if constexpr (std::is_floating_point<T>::value) {
    T m = std::fmod(a, b);
    if (c_fmod) return m;
    if (m != 0) {
      if ((b < 0) != (m < 0)) m += b;
    } else {
      m = std::copysign(T(0), b);
    }
    return m;
  } else {
    if (b == 0) return 0;
    T m = 0;
    if constexpr (std::is_signed<T>::value) {
      if (b == static_cast<T>(-1)) return 0;  // lowest % -1 would trap
      m = static_cast<T>(a % b);
      if (!c_fmod && m != 0 && ((m < 0) != (b < 0))) m = static_cast<T>(m + b);
    } else {
      m = static_cast<T>(a % b);  // unsigned: both signs agree
    }
    return m;
  }
}

// The numpy broadcast of inputs 0 and 1 (refused naming both blobs).
math::BroadcastIndex BroadcastInputs(const OperatorBase& op, std::vector<int64_t>* out) {
  const Tensor &A = op.InputTensor(0), &B = op.InputTensor(1);
  const auto& d = op.def();
  HN_ENFORCE(math::NumpyBroadcastShape({A.shape(), B.shape()}, out), op.type(), ": ",
             math::DescribeShapes({d.input(0), d.input(1)}, {A.shape(), B.shape()}),
             " do not broadcast (numpy rule: aligned from the last dim, each dim equal or 1)");
  return math::MakeBroadcastIndex(*out, {A.shape(), B.shape()});
}

// x^e for integers: squaring in uint64 (wraps), negative e as 1 / x^|e| truncated.
int64_t IntPow(int64_t x, int64_t e) {
  if (e < 0) return x == 1 ? 1 : x == -1 ? (e % 2 ? -1 : 1) : 0;
  uint64_t r = 1, b = static_cast<uint64_t>(x);
  for (uint64_t k = static_cast<uint64_t>(e); k; k >>= 1, b *= b)
    if (k & 1) r *= b;
  return static_cast<int64_t>(r);
}

bool IsIntegerType(DataType t) {
  return t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32 || t == DataType::Int64 ||
         t == DataType::UInt8 || t == DataType::UInt16 || t == DataType::UInt32 || t == DataType::UInt64;
}

}  // namespace

void OnnxPowOp::RunOnDevice() {
  const Tensor &X = Input(0), &E = Input(1);
  std::vector<int64_t> out;
  const math::BroadcastIndex ix = BroadcastInputs(*this, &out);
  Tensor* Y = Output(0, out, X.dtype());
  const bool ints = IsIntegerType(X.dtype()) && IsIntegerType(E.dtype());
  const bool int_out = IsIntegerType(X.dtype());
  HN_ENFORCE(int_out || X.dtype() == DataType::Float || X.dtype() == DataType::Double || X.dtype() == DataType::Float16,
             type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(X.dtype()), "; a numeric dtype is required");
  const size_t item = X.itemsize();
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  int64_t off[math::kMaxBroadcastInputs];
  for (int64_t i = 0; i < Y->numel(); ++i) {
    math::BroadcastOffsets(ix, i, off);
    const double x = ElementAsDouble(*this, X, 0, off[0]), e = ElementAsDouble(*this, E, 1, off[1]);
    char bytes[16] = {};
    if (ints) {  // wrapped to X's width through the integer bits, not through double
      const uint64_t w = static_cast<uint64_t>(IntPow(static_cast<int64_t>(x), static_cast<int64_t>(e)));
      DispatchArithmetic(*this, X.dtype(), 0, [&](auto zero) {
        const auto t = static_cast<decltype(zero)>(w);
        std::memcpy(bytes, &t, sizeof t);
      });
    } else {
      double v = std::pow(x, e);
      if (int_out) v = std::isfinite(v) && std::fabs(v) < 9.2e18 ? std::trunc(v) : 0.0;
      EncodeAs(*this, X.dtype(), v, bytes);
    }
    std::memcpy(y + i * item, bytes, item);
  }
}

OnnxModOp::OnnxModOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), fmod_(GetSingleArgument<int>("fmod", 0) != 0) {}

void OnnxModOp::RunOnDevice() {
  const Tensor &A = Input(0), &B = Input(1);
  const auto& d = def();
  HN_ENFORCE(A.dtype() == B.dtype(), type(), ": input 0 ('", d.input(0), "') is ", DataTypeName(A.dtype()),
             " but input 1 ('", d.input(1), "') is ", DataTypeName(B.dtype()), "; they must have one dtype");
  std::vector<int64_t> out;
  const math::BroadcastIndex ix = BroadcastInputs(*this, &out);
  Tensor* C = Output(0, out, A.dtype());
  int64_t off[math::kMaxBroadcastInputs];
  if (A.dtype() == DataType::Float16) {
    const Half* a = A.data<Half>();
    const Half* b = B.data<Half>();
    Half* c = C->mutable_data<Half>();
    for (int64_t i = 0; i < C->numel(); ++i) {
      math::BroadcastOffsets(ix, i, off);
      c[i] = FloatToHalf(ModOne(HalfToFloat(a[off[0]]), HalfToFloat(b[off[1]]), fmod_));
    }
    return;
  }
  DispatchArithmetic(*this, A.dtype(), 0, [&](auto zero) {
    using T = decltype(zero);
    const T* a = A.template data<T>();
    const T* b = B.template data<T>();
    T* c = C->template mutable_data<T>();
    for (int64_t i = 0; i < C->numel(); ++i) {
      math::BroadcastOffsets(ix, i, off);
      c[i] = ModOne<T>(a[off[0]], b[off[1]], fmod_);
    }
  });
}

OPERATOR_SCHEMA(OnnxMod)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(NumpyBroadcastInference)
    .SetDoc("ONNX's Mod(A, B) -> C with numpy broadcasting; arg fmod 0 (default): numpy's mod, the divisor's sign; "
            "1: C's fmod, the dividend's sign. float16/32/64, int8/16/32/64, uint8/16/32/64; an integer zero divisor "
            "gives 0. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxMod, OnnxModOp);
OPERATOR_SCHEMA(OnnxPow).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's Pow(X, E) -> Y of X's dtype with numpy broadcasting; integer powers by squaring (wrapping), "
            "others by C's pow in float64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxPow, OnnxPowOp);

}  // namespace hetnet
