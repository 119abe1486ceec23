// LRN across channels (NCHW), Caffe2's definition: with pre_pad = (size - 1) / 2,
//   scale[n, c, h, w] = bias + alpha / size * sum_{c' = c - pre_pad}^{c - pre_pad + size - 1} X[n, c', h, w]^2
//   Y = X * scale^-beta.                         Outputs Y and (optionally) scale.
// LRNGradient(X, Y, dY) -> dX recomputes scale:
//   dX[c] = dY[c] * scale[c]^-beta - 2 alpha beta / size * X[c] * sum_{c' whose window holds c} dY Y / scale [c'].
// Computed directly that is O(min(size, C)) per element (its square for the gradient): the CPU
// loops (lrn_op.cc) and the CUDA kernels (lrn_op.cu) slide the windows over the channels instead
// (LRNWindowSum), O(elements) whatever `size` is.
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

#if defined(__CUDACC__)
#define HN_LRN_HD __host__ __device__
#else
#define HN_LRN_HD
#endif

namespace hetnet {

struct LRNParams {
  int64_t N, C, HW;
  int size, pre_pad;
  float alpha, beta, bias;
};

// A window sum slid over the channels (add what enters, subtract what leaves) that gives what
// summing the window afresh would, also with NaN and infinite terms: finite terms are summed in
// double, non-finite ones counted, so a NaN or Inf that leaves the window leaves no trace (in a
// plain running sum, NaN - NaN and Inf - Inf would make every later channel NaN).
struct LRNWindowSum {
  double finite = 0.0;
  int nan = 0, pos_inf = 0, neg_inf = 0;
  HN_LRN_HD void Add(double v, int sign) {  // sign +1: v enters; -1: v leaves
    if (v != v) nan += sign;
    else if (v == static_cast<double>(INFINITY)) pos_inf += sign;
    else if (v == -static_cast<double>(INFINITY)) neg_inf += sign;
    else finite += sign * v;
  }
  HN_LRN_HD double Value() const {
    if (nan > 0 || (pos_inf > 0 && neg_inf > 0)) return static_cast<double>(NAN);
    if (pos_inf > 0) return static_cast<double>(INFINITY);
    if (neg_inf > 0) return -static_cast<double>(INFINITY);
    return finite;
  }
};

template <class Context>
void LRNForward(const LRNParams& p, const float* x, float* y, float* scale, Context* ctx);
template <class Context>
void LRNBackward(const LRNParams& p, const float* x, const float* y, const float* dy, float* dx, Context* ctx);

inline LRNParams MakeLRNParams(const caffe2::OperatorDef& def, const Tensor& X, int size, float alpha, float beta,
                               float bias) {
  EnforceFloatInput(def, X, 0);
  HN_ENFORCE(X.ndim() == 4, def.type(), ": input 0 ('", def.input(0), "') has shape ", X.ShapeString(),
             " but NCHW is required");
  HN_ENFORCE(size > 0, def.type(), ": argument 'size' must be positive, got ", size);
  return LRNParams{X.dim(0), X.dim(1), X.dim(2) * X.dim(3), size, (size - 1) / 2, alpha, beta, bias};
}

template <class Context>
class LRNOp final : public Operator<Context> {
 public:
  LRNOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), size_(this->template GetSingleArgument<int>("size", 0)),
        alpha_(this->template GetSingleArgument<float>("alpha", 0.f)),
        beta_(this->template GetSingleArgument<float>("beta", 0.f)),
        bias_(this->template GetSingleArgument<float>("bias", 1.f)), scale_(this->device()) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const LRNParams p = MakeLRNParams(this->def(), X, size_, alpha_, beta_, bias_);
    Tensor* S = this->OutputSize() > 1 ? this->Output(1, X.shape(), DataType::Float) : &scale_;
    if (S == &scale_) scale_.Resize(X.shape());
    float* s = S->template mutable_data<float>();
    LRNForward<Context>(p, X.template data<float>(), this->Output(0, X.shape(), DataType::Float)->template mutable_data<float>(),
                        s, &this->context_);
  }

 private:
  int size_;
  float alpha_, beta_, bias_;
  Tensor scale_;
};

template <class Context>
class LRNGradientOp final : public Operator<Context> {
 public:
  LRNGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), size_(this->template GetSingleArgument<int>("size", 0)),
        alpha_(this->template GetSingleArgument<float>("alpha", 0.f)),
        beta_(this->template GetSingleArgument<float>("beta", 0.f)),
        bias_(this->template GetSingleArgument<float>("bias", 1.f)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const LRNParams p = MakeLRNParams(this->def(), X, size_, alpha_, beta_, bias_);
    for (int i = 1; i < 3; ++i)
      HN_ENFORCE(this->Input(i).shape() == X.shape() && this->Input(i).dtype() == DataType::Float,
                 "LRNGradient: input ", i, " ('", this->def().input(i), "') is ", this->Input(i).DebugString(),
                 " but float32 ", X.ShapeString(), " is required");
    LRNBackward<Context>(p, X.template data<float>(), this->Input(1).template data<float>(),
                         this->Input(2).template data<float>(),
                         this->Output(0, X.shape(), DataType::Float)->template mutable_data<float>(), &this->context_);
  }

 private:
  int size_;
  float alpha_, beta_, bias_;
};

}  // namespace hetnet
