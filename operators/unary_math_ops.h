// Caffe2's elementwise math operators Exp, Log, Abs, Sqr, Negative and Pow (argument `exponent`),
// and AbsGradient. The float32 ops are activation_ops.h's UnaryFloatOp over a kernel function;
// Negative also takes float64, int32 and int64 (Caffe2's NumericTypes). The per-element math is one
// HN_HOST_DEVICE function each, shared by the CPU loops (unary_math_ops.cc) and the CUDA kernels
// (unary_math_ops.cu), so both devices give the same NaN/Inf answers.
//
// Gradients are Caffe2's gradient defs, built from existing ops (Mul, Div, Scale, Pow, Negative)
// except AbsGradient:
//   Exp:      Mul(Y, dY) -> dX
//   Log:      Div(dY, X) -> dX                     (in place: Exp(Y) -> t; Div(dY, t) -> dX)
//   Abs:      AbsGradient(X, dY) -> dX = dY * sign(X)
//   Sqr:      Scale(dY, scale=2) -> dX; Mul(dX, X) -> dX
//   Negative: Negative(dY) -> dX
//   Pow:      Pow(X, exponent=e-1) -> dX; Mul(dX, dY) -> dX; Scale(dX, scale=e) -> dX
//             (in place, as Caffe2: Pow(Y, exponent=(e-1)/e), exact only for X > 0, into a
//             temporary t: in place, dX and dY are one blob name)
#pragma once

#include <cmath>
#include <cstdint>

#include "operators/activation_ops.h"
#include "operators/host_device.h"

namespace hetnet {

// ---- per-element math (CPU and CUDA) ----
HN_HOST_DEVICE inline float ExpValue(float x) { return expf(x); }
HN_HOST_DEVICE inline float LogValue(float x) { return logf(x); }
HN_HOST_DEVICE inline float AbsValue(float x) { return fabsf(x); }
HN_HOST_DEVICE inline float SqrValue(float x) { return x * x; }
HN_HOST_DEVICE inline float PowValue(float x, float e) { return powf(x, e); }
// dX = dY * sign(X) with IEEE products: X = 0 gives 0 * dY (0, or NaN for a non-finite dY), a NaN X
// gives NaN. (Caffe2's select gave 0 at X = 0 and -dY for a NaN X.)
HN_HOST_DEVICE inline float AbsGradientValue(float x, float dy) { return x > 0.f ? dy : x < 0.f ? -dy : x * dy; }
// Integer negation wraps (-lowest is lowest, as NumPy gives) instead of overflowing (undefined in C++).
HN_HOST_DEVICE inline float NegateValue(float x) { return -x; }
HN_HOST_DEVICE inline double NegateValue(double x) { return -x; }
HN_HOST_DEVICE inline int32_t NegateValue(int32_t x) { return static_cast<int32_t>(0u - static_cast<uint32_t>(x)); }
HN_HOST_DEVICE inline int64_t NegateValue(int64_t x) {
  return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
}

// ---- kernels per device ----
template <class Context> void ExpKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void LogKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void AbsKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void SqrKernel(int64_t n, const float* x, float* y, Context* ctx);
// dx from x (the forward input) and dy.
template <class Context> void AbsGradientKernel(int64_t n, const float* x, const float* dy, float* dx, Context* ctx);
template <class Context> void PowKernel(int64_t n, const float* x, float exponent, float* y, Context* ctx);
// Instantiated for float, double, int32_t, int64_t on each device.
template <typename T, class Context> void NegativeKernel(int64_t n, const T* x, T* y, Context* ctx);

template <class Context> using ExpOp = UnaryFloatOp<Context, &ExpKernel<Context>>;
template <class Context> using LogOp = UnaryFloatOp<Context, &LogKernel<Context>>;
template <class Context> using AbsOp = UnaryFloatOp<Context, &AbsKernel<Context>>;
template <class Context> using SqrOp = UnaryFloatOp<Context, &SqrKernel<Context>>;
// Inputs (X, dY): UnaryFloatGradientOp's first input is whatever the kernel reads, here X.
template <class Context> using AbsGradientOp = UnaryFloatGradientOp<Context, &AbsGradientKernel<Context>>;

// Y = -X for float32, float64, int32, int64.
template <class Context>
class NegativeOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    switch (X.dtype()) {
      case DataType::Float: return Compute<float>(X);
      case DataType::Double: return Compute<double>(X);
      case DataType::Int32: return Compute<int32_t>(X);
      case DataType::Int64: return Compute<int64_t>(X);
      default:
        HN_THROW(kInvalidArgument, this->type(), ": unsupported dtype ", DataTypeName(X.dtype()), " of input 0 ('",
                 this->def().input(0), "'); float32, float64, int32 and int64 are supported");
    }
  }

 private:
  template <typename T>
  void Compute(const Tensor& X) {
    Tensor* Y = this->Output(0, X.shape(), X.dtype());
    NegativeKernel<T, Context>(X.numel(), X.template data<T>(), Y->template mutable_data<T>(), &this->context_);
  }
};

// Y = X ^ exponent (float32). Only the argument form: Caffe2's second form, the exponent as input 1
// with legacy broadcast, is refused with kUnsupported when the operator is created.
void CheckPowDef(const caffe2::OperatorDef& def);

template <class Context>
class PowOp final : public Operator<Context> {
 public:
  PowOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {
    CheckPowDef(def);
    exponent_ = this->template GetSingleArgument<float>("exponent", 0.f);
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    PowKernel<Context>(X.numel(), X.template data<float>(), exponent_, Y->template mutable_data<float>(),
                       &this->context_);
  }

 private:
  float exponent_ = 0.f;
};

}  // namespace hetnet
