// Dropout(X) -> Y, mask (bool), Caffe2's semantics: training keeps each element with probability
// 1 - ratio and scales kept ones by 1 / (1 - ratio); is_test=1 passes X through (mask all true).
// DropoutGrad(dY, mask) -> dX = dY * mask / (1 - ratio) (with is_test=1: DropoutGrad(dY) -> dY).
// Uniform draws come from math::RandUniform (the op's mt19937, seeded from device_option.random_seed,
// random when unset) so a seeded op draws the same mask on every device; the masking is a per-device
// kernel (dropout_op.cc / dropout_op.cu).
#pragma once

#include <random>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "device/math.h"

namespace hetnet {

template <class Context>
void DropoutKernel(int64_t n, float ratio, const float* x, const float* u, float* y, bool* mask, Context* ctx);
// dx = dy * scale * mask (mask == nullptr: all true).
template <class Context>
void DropoutGradKernel(int64_t n, float scale, const float* dy, const bool* mask, float* dx, Context* ctx);

inline float CheckDropoutRatio(const caffe2::OperatorDef& def, float ratio) {
  HN_ENFORCE(ratio >= 0.f && ratio < 1.f, def.type(), ": ratio ", ratio, " must be in [0, 1)");
  return ratio;
}

template <class Context>
class DropoutOp final : public Operator<Context> {
 public:
  DropoutOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        ratio_(CheckDropoutRatio(def, this->template GetSingleArgument<float>("ratio", 0.5f))),
        is_test_(this->template GetSingleArgument<int>("is_test", 0) != 0),
        gen_(def.device_option().has_random_seed() ? def.device_option().random_seed() : std::random_device{}()),
        u_(this->device()) {
    HN_ENFORCE(is_test_ || this->OutputSize() == 2, "Dropout: training (is_test=0) needs outputs Y and mask");
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    const int64_t n = X.numel();
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    bool* mask = this->OutputSize() > 1 ? this->Output(1, X.shape(), DataType::Bool)->template mutable_data<bool>() : nullptr;
    if (is_test_) {
      if (!this->IsInputOutputAlias(0, 0)) Y->CopyFrom(X, &this->context_);
      if (mask) math::Set<bool, Context>(n, true, mask, &this->context_);
      return;
    }
    u_.Resize({n});
    float* u = u_.template mutable_data<float>();
    math::RandUniform<Context>(n, 0.f, 1.f, u, gen_, &this->context_);
    DropoutKernel<Context>(n, ratio_, X.template data<float>(), u, Y->template mutable_data<float>(), mask,
                           &this->context_);
  }

 private:
  float ratio_;
  bool is_test_;
  std::mt19937 gen_;
  Tensor u_;
};

template <class Context>
class DropoutGradOp final : public Operator<Context> {
 public:
  DropoutGradOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        ratio_(CheckDropoutRatio(def, this->template GetSingleArgument<float>("ratio", 0.5f))),
        is_test_(this->template GetSingleArgument<int>("is_test", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& dY = this->Input(0);
    EnforceFloatInput(this->def(), dY, 0);
    const bool* mask = nullptr;
    if (!is_test_) {
      HN_ENFORCE(this->InputSize() == 2, "DropoutGrad: training needs inputs dY and mask");
      const Tensor& M = this->Input(1);
      HN_ENFORCE(M.dtype() == DataType::Bool && M.shape() == dY.shape(), "DropoutGrad: mask ('", this->def().input(1),
                 "') is ", M.DebugString(), " but bool ", dY.ShapeString(), " is required");
      mask = M.template data<bool>();
    }
    Tensor* dX = this->Output(0, dY.shape(), DataType::Float);
    DropoutGradKernel<Context>(dY.numel(), is_test_ ? 1.f : 1.f / (1.f - ratio_), dY.template data<float>(), mask,
                               dX->template mutable_data<float>(), &this->context_);
  }

 private:
  float ratio_;
  bool is_test_;
};

}  // namespace hetnet
