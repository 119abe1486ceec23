// ONNX's elementwise float functions that Caffe2 lacks: Ceil, Floor, Round (half to even), Sin, Cos,
// Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh (float32 or float64 in, same out), and the
// predicates IsNaN and IsInf (args detect_positive / detect_negative, default 1) on float16, float32
// or float64, giving bool. C's libm answers: out-of-domain inputs (asin(2), acosh(0.5)) give NaN,
// NaN propagates. CPU only; no gradients (Ceil / Floor / Round have a zero one).
#pragma once

#include "core/operator.h"

namespace hetnet {

enum class FloatFn { kCeil, kFloor, kRound, kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh };

// y[i] = f(x[i]) for n elements (T: float or double), chunked over the OpenMP team for large n.
template <typename T>
void ApplyFloatFn(FloatFn f, int64_t n, const T* x, T* y);

template <FloatFn F>
class FloatUnaryOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

// IsNaN (IsInf = false) or IsInf.
template <bool IsInf>
class FloatPredicateOp final : public Operator<CPUContext> {
 public:
  FloatPredicateOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool positive_ = true, negative_ = true;
};

}  // namespace hetnet
