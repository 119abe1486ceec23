// Sum (n same-shape inputs, output may share input 0's blob) and Scale (Y = scale * X, in place
// allowed). The arithmetic is device/math's BroadcastBinary / Scale, so both devices share this code.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "device/math.h"

namespace hetnet {

template <class Context>
class SumOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor X0 = this->Input(0);  // a view: keeps input 0's storage if the output replaces it
    for (int i = 1; i < this->InputSize(); ++i) {
      const Tensor& Xi = this->Input(i);
      HN_ENFORCE(Xi.shape() == X0.shape() && Xi.dtype() == X0.dtype(), "Sum: input ", i, " ('",
                 this->def().input(i), "') is ", DataTypeName(Xi.dtype()), Xi.ShapeString(), " but input 0 ('",
                 this->def().input(0), "') is ", DataTypeName(X0.dtype()), X0.ShapeString());
    }
    switch (X0.dtype()) {
      case DataType::Float: return Compute<float>(X0);
      case DataType::Double: return Compute<double>(X0);
      case DataType::Int32: return Compute<int32_t>(X0);
      case DataType::Int64: return Compute<int64_t>(X0);
      default:
        HN_THROW(kInvalidArgument, "Sum: unsupported dtype ", DataTypeName(X0.dtype()), " of input 0 ('",
                 this->def().input(0), "')");
    }
  }

 private:
  template <typename T>
  void Compute(const Tensor& X0) {
    Tensor* Y = this->Output(0, X0.shape(), X0.dtype());
    T* y = Y->template mutable_data<T>();
    const int64_t n = X0.numel();
    if (this->InputSize() == 1) {
      if (y != X0.template data<T>())
        this->context_.CopyBytes(n * sizeof(T), X0.template data<T>(), X0.device(), y, Y->device());
      return;
    }
    math::BroadcastBinary<T, Context>(math::BinaryOp::Add, 1, n, 1, X0.template data<T>(),
                                      this->Input(1).template data<T>(), y, &this->context_);
    for (int i = 2; i < this->InputSize(); ++i)
      math::BroadcastBinary<T, Context>(math::BinaryOp::Add, 1, n, 1, y, this->Input(i).template data<T>(), y,
                                        &this->context_);
  }
};

template <class Context>
class ScaleOp final : public Operator<Context> {
 public:
  ScaleOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), scale_(this->template GetSingleArgument<float>("scale", 1.f)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    math::Scale<Context>(X.numel(), scale_, X.template data<float>(), Y->template mutable_data<float>(),
                         &this->context_);
  }

 private:
  float scale_;
};

}  // namespace hetnet
