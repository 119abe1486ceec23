// Losses, Caffe2 semantics (float32):
//   LabelCrossEntropy(X [N, D] probabilities (1-D X is one row), label int32 [N] or [N, 1]) -> Y [N],
//     Y[i] = -log(max(X[i, label[i]], 1e-20)).
//   CrossEntropy(X [N, D], label float [N, D] soft labels) -> Y [N], Y[i] = -sum_j label[i,j] log(max(X[i,j], 1e-20)).
//   AveragedLoss(X any shape) -> Y 0-d, the mean of X (0 for an empty X).
// Gradients: LabelCrossEntropyGradient(X, label, dY) -> dX; CrossEntropyGradient(X, label, dY) -> dX
// (no gradient for the soft labels); AveragedLossGradient(X, dY) -> dX = dY / numel(X).
// CPU kernels check label ids; CUDA kernels clamp an out-of-range id into the row (no host sync).
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/host_device.h"

namespace hetnet {

constexpr float kLogThreshold = 1e-20f;

// Per-element math shared by the CPU loops and the CUDA kernels. The clamp is std::max's (a NaN
// probability stays NaN) on both devices.
HN_HOST_DEVICE inline float XentClampProb(float p) { return p < kLogThreshold ? kLogThreshold : p; }
// label * log(p): one term of a row's (negated) cross entropy.
HN_HOST_DEVICE inline float XentLogTerm(float label, float p) { return label * logf(XentClampProb(p)); }
// dLoss/dp for one element, the loss weighted by dy (label 1 for LabelCrossEntropy's hit).
HN_HOST_DEVICE inline float XentGradValue(float dy, float label, float p) { return -dy * label / XentClampProb(p); }

template <class Context>
void LabelCrossEntropyKernel(int64_t N, int64_t D, const float* x, const int32_t* label, float* y, Context* ctx);
template <class Context>
void LabelCrossEntropyGradientKernel(int64_t N, int64_t D, const float* x, const int32_t* label, const float* dy,
                                     float* dx, Context* ctx);
template <class Context>
void CrossEntropyKernel(int64_t N, int64_t D, const float* x, const float* label, float* y, Context* ctx);
template <class Context>
void CrossEntropyGradientKernel(int64_t N, int64_t D, const float* x, const float* label, const float* dy, float* dx,
                                Context* ctx);
// y[0] = mean of x[0..n) (0 for n == 0); dx[k] = dy[0] / n. dy and y live on the device.
template <class Context> void AveragedLossKernel(int64_t n, const float* x, float* y, Context* ctx);
template <class Context> void AveragedLossGradientKernel(int64_t n, const float* dy, float* dx, Context* ctx);

struct XentDims {
  int64_t N, D;
};

// X as [N, D] (1-D X: N = 1) and the label's shape checked against it; `soft` for CrossEntropy.
inline XentDims ComputeXentDims(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& label, bool soft) {
  HN_ENFORCE(!x.empty(), def.type(), ": input 0 ('", def.input(0), "') must have at least 1 dim, has shape ",
             ShapeToString(x));
  XentDims d{x.size() > 1 ? x[0] : 1, x.size() > 1 ? ProdDims(x, 1, x.size()) : x[0]};
  bool ok;
  if (soft) {
    ok = (label.size() == 2 && label[0] == d.N && label[1] == d.D) || label == x;
  } else {
    ok = (label.size() == 1 || (label.size() == 2 && label[1] == 1)) && label[0] == d.N;
  }
  HN_ENFORCE(ok, def.type(), ": input 1 ('", def.input(1), "') has shape ", ShapeToString(label), " but input 0 ('",
             def.input(0), "') of shape ", ShapeToString(x), " needs ",
             soft ? MakeString("soft labels of shape [", d.N, ", ", d.D, "]")
                  : MakeString(d.N, " labels ([", d.N, "] or [", d.N, ", 1])"));
  return d;
}

// Forward and gradient of LabelCrossEntropy / CrossEntropy in one template.
template <class Context, bool kSoft, bool kGradient>
class CrossEntropyOpT final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& L = this->Input(1);
    EnforceFloatInput(this->def(), X, 0);
    EnforceDtype(this->def(), L, 1, kSoft ? DataType::Float : DataType::Int32);
    const XentDims d = ComputeXentDims(this->def(), X.shape(), L.shape(), kSoft);
    auto* ctx = &this->context_;
    const float* x = X.template data<float>();
    if (!kSoft && Context::kDeviceType == DeviceType::CPU) {
      const int32_t* l = L.template data<int32_t>();
      for (int64_t i = 0; i < d.N; ++i)
        HN_ENFORCE(l[i] >= 0 && l[i] < d.D, this->type(), ": input 1 ('", this->def().input(1), "') holds label ",
                   l[i], " at ", i, " but input 0 ('", this->def().input(0), "') has ", d.D, " classes");
    }
    if (!kGradient) {
      float* y = this->Output(0, {d.N}, DataType::Float)->template mutable_data<float>();
      if (kSoft) CrossEntropyKernel<Context>(d.N, d.D, x, L.template data<float>(), y, ctx);
      else LabelCrossEntropyKernel<Context>(d.N, d.D, x, L.template data<int32_t>(), y, ctx);
      return;
    }
    const Tensor& dY = this->Input(2);
    EnforceFloatInput(this->def(), dY, 2);
    HN_ENFORCE(dY.numel() == d.N && dY.ndim() == 1, this->type(), ": input 2 ('", this->def().input(2),
               "') has shape ", dY.ShapeString(), " but the loss has shape [", d.N, "]");
    float* dx = this->Output(0, X.shape(), DataType::Float)->template mutable_data<float>();
    if (kSoft) CrossEntropyGradientKernel<Context>(d.N, d.D, x, L.template data<float>(), dY.template data<float>(), dx, ctx);
    else LabelCrossEntropyGradientKernel<Context>(d.N, d.D, x, L.template data<int32_t>(), dY.template data<float>(), dx, ctx);
  }
};

template <class Context> using LabelCrossEntropyOp = CrossEntropyOpT<Context, false, false>;
template <class Context> using LabelCrossEntropyGradientOp = CrossEntropyOpT<Context, false, true>;
template <class Context> using CrossEntropyOp = CrossEntropyOpT<Context, true, false>;
template <class Context> using CrossEntropyGradientOp = CrossEntropyOpT<Context, true, true>;

template <class Context>
class AveragedLossOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    Tensor* Y = this->Output(0, {}, DataType::Float);
    AveragedLossKernel<Context>(X.numel(), X.template data<float>(), Y->template mutable_data<float>(),
                                &this->context_);
  }
};

template <class Context>
class AveragedLossGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& dY = this->Input(1);
    EnforceFloatInput(this->def(), dY, 1);
    HN_ENFORCE(dY.numel() == 1, this->type(), ": input 1 ('", this->def().input(1), "') has shape ",
               dY.ShapeString(), " but the gradient of a scalar loss has one element");
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    AveragedLossGradientKernel<Context>(X.numel(), dY.template data<float>(), dX->template mutable_data<float>(),
                                        &this->context_);
  }
};

}  // namespace hetnet
