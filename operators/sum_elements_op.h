// SumElements(X) -> sum: the scalar (shape []) sum of all float32 elements of X, divided by X.numel()
// when `average` is set (an empty X sums to 0). SumElementsGradient(X, dsum) -> dX = dsum (/ numel)
// everywhere.
#pragma once

#include "core/operator.h"
#include "device/math.h"

namespace hetnet {

inline void CheckSumElementsInput(const caffe2::OperatorDef& def, const Tensor& t, int i) {
  HN_CHECK_KIND(kUnsupported, t.dtype() == DataType::Float, def.type(), ": input ", i, " ('", def.input(i),
                "') is ", DataTypeName(t.dtype()), "; only float32 is supported");
}

template <class Context>
class SumElementsOp final : public Operator<Context> {
 public:
  SumElementsOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), average_(this->template GetSingleArgument<bool>("average", false)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    CheckSumElementsInput(this->def(), X, 0);
    const int64_t n = X.numel();
    Tensor* sum = this->Output(0, {}, DataType::Float);
    float* s = sum->template mutable_data<float>();
    // X viewed as [n, 1, 1]: the one "column" summed over n rows (writes 0 when n == 0).
    math::ReduceSumPreMidPost<Context>(n, 1, 1, X.template data<float>(), s, &this->context_);
    if (average_ && n > 0) math::Scale<Context>(1, 1.f / static_cast<float>(n), s, s, &this->context_);
  }

 private:
  bool average_;
};

template <class Context>
class SumElementsGradientOp final : public Operator<Context> {
 public:
  SumElementsGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), average_(this->template GetSingleArgument<bool>("average", false)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& dsum = this->Input(1);
    CheckSumElementsInput(this->def(), dsum, 1);
    HN_ENFORCE(dsum.numel() == 1, this->def().type(), ": input 1 ('", this->def().input(1),
               "') must hold one element, has shape ", dsum.ShapeString());
    const int64_t n = X.numel();
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    if (n == 0) return;
    float* dx = dX->template mutable_data<float>();
    // dx = 0 + dsum broadcast over [n, 1, 1]; then the 1/n of `average`.
    math::Set<float, Context>(n, 0.f, dx, &this->context_);
    math::BroadcastBinary<float, Context>(math::BinaryOp::Add, n, 1, 1, dx, dsum.template data<float>(), dx,
                                          &this->context_);
    if (average_) math::Scale<Context>(n, 1.f / static_cast<float>(n), dx, dx, &this->context_);
  }

 private:
  bool average_;
};

}  // namespace hetnet
