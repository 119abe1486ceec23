// Clip: Y = min(max(X, min), max) (args min, max; defaults the lowest and highest float); in place allowed.
// ClipGradient(Y, dY) -> dX = dY where min < Y < max, else 0 (Caffe2 reads the output Y).
#pragma once

#include <limits>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/host_device.h"

namespace hetnet {

// Per element, for the CPU loop and the CUDA kernel. Comparisons written so that NaN propagates.
HN_HOST_DEVICE inline float ClipValue(float x, float lo, float hi) {
  const float v = x < lo ? lo : x;
  return hi < v ? hi : v;
}
HN_HOST_DEVICE inline float ClipGradientValue(float y, float dy, float lo, float hi) {
  return (y <= lo || y >= hi) ? 0.f : dy;
}

template <class Context> void ClipKernel(int64_t n, float lo, float hi, const float* x, float* y, Context* ctx);
template <class Context>
void ClipGradientKernel(int64_t n, float lo, float hi, const float* y, const float* dy, float* dx, Context* ctx);

template <class Context, bool kGradient>
class ClipOpT final : public Operator<Context> {
 public:
  ClipOpT(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        min_(this->template GetSingleArgument<float>("min", std::numeric_limits<float>::lowest())),
        max_(this->template GetSingleArgument<float>("max", std::numeric_limits<float>::max())) {
    HN_ENFORCE(min_ <= max_, def.type(), ": min (", min_, ") is greater than max (", max_, ")");
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    if (!kGradient) {
      Tensor* Y = this->Output(0, X.shape(), DataType::Float);
      ClipKernel<Context>(X.numel(), min_, max_, X.template data<float>(), Y->template mutable_data<float>(),
                          &this->context_);
      return;
    }
    const Tensor& dY = this->Input(1);
    EnforceFloatInput(this->def(), dY, 1);
    EnforceSameShape(this->def(), X, 0, dY, 1);
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    ClipGradientKernel<Context>(X.numel(), min_, max_, X.template data<float>(), dY.template data<float>(),
                                dX->template mutable_data<float>(), &this->context_);
  }

 private:
  float min_, max_;
};

template <class Context> using ClipOp = ClipOpT<Context, false>;
template <class Context> using ClipGradientOp = ClipOpT<Context, true>;

}  // namespace hetnet
