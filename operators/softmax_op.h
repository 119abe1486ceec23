// Softmax over the dims from `axis` on (X viewed as [N, D]); SoftmaxGradient(Y, dY) -> dX.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// Row-wise softmax of x[N, D] into y (numerically stable: the row max is subtracted).
template <class Context> void SoftmaxKernel(int64_t N, int64_t D, const float* x, float* y, Context* ctx);
// dx = y * (dy - rowsum(dy * y)).
template <class Context>
void SoftmaxGradientKernel(int64_t N, int64_t D, const float* y, const float* dy, float* dx, Context* ctx);

inline int CanonicalAxisOf(const caffe2::OperatorDef& def, int axis, int ndim, int input) {
  HN_ENFORCE(axis >= -ndim && axis < std::max(ndim, 1), def.type(), ": axis ", axis,
             " is out of range for input ", input, " ('", def.input(input), "') with ", ndim, " dims");
  return axis < 0 ? axis + ndim : axis;
}

template <class Context>
class SoftmaxOp final : public Operator<Context> {
 public:
  SoftmaxOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 1)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    const int a = CanonicalAxisOf(this->def(), axis_, X.ndim(), 0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    SoftmaxKernel<Context>(X.size_to_dim(a), X.size_from_dim(a), X.template data<float>(),
                           Y->template mutable_data<float>(), &this->context_);
  }

 private:
  int axis_;
};

template <class Context>
class SoftmaxGradientOp final : public Operator<Context> {
 public:
  SoftmaxGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 1)) {}
  void RunOnDevice() override {
    const Tensor& Y = this->Input(0);
    const Tensor& dY = this->Input(1);
    HN_ENFORCE(Y.shape() == dY.shape(), "SoftmaxGradient: input 0 ('", this->def().input(0), "') has shape ",
               Y.ShapeString(), " but input 1 ('", this->def().input(1), "') has shape ", dY.ShapeString());
    const int a = CanonicalAxisOf(this->def(), axis_, Y.ndim(), 0);
    Tensor* dX = this->Output(0, Y.shape(), DataType::Float);
    SoftmaxGradientKernel<Context>(Y.size_to_dim(a), Y.size_from_dim(a), Y.template data<float>(),
                                   dY.template data<float>(), dX->template mutable_data<float>(), &this->context_);
  }

 private:
  int axis_;
};

}  // namespace hetnet
