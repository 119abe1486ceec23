// Expand(X, shape) -> Y: X broadcast numpy-style against `shape` (a 1-D int64/int32 tensor on CPU for
// any device), Caffe2's and ONNX's rule: Y's shape is the broadcast of X's dims and `shape`, so a 1 in
// `shape` keeps X's dim. Any fixed-size dtype (the copy moves element bits). ExpandGradient(dY, X) ->
// dX sums dY over the stretched dims (float32).
#pragma once

#include "core/operator.h"
#include "device/broadcast.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// Y's shape; an error naming the op, X and the requested shape when they do not broadcast.
std::vector<int64_t> ExpandOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                       const std::vector<int64_t>& shape);
// The 1-D int64/int32 shape input as dims.
std::vector<int64_t> ReadShapeInput(const caffe2::OperatorDef& def, const Tensor& S, int index);

template <class Context>
class ExpandOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);  // not in place (the schema refuses it)
    HN_CHECK_KIND(kUnsupported, X.dtype() != DataType::String, this->type(), ": input 0 ('", this->def().input(0),
                  "') is a string tensor; fixed-size dtypes only");
    const std::vector<int64_t> out = ExpandOutputShape(this->def(), X.shape(), ReadShapeInput(this->def(), this->Input(1), 1));
    const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {X.shape()});
    Tensor* Y = this->Output(0, out, X.dtype());
    math::BroadcastCopy<Context>(ix, Y->numel(), X.itemsize(), X.raw_data(), Y->raw_mutable_data(X.dtype()),
                                 &this->context_);
  }
};

template <class Context>
class ExpandGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& dY = this->Input(0);
    const Tensor& X = this->Input(1);
    EnforceFloatInput(this->def(), dY, 0);
    std::vector<int64_t> out;
    HN_ENFORCE(math::NumpyBroadcastShape({X.shape(), dY.shape()}, &out) && out == dY.shape(), this->type(),
               ": input 0 ('", this->def().input(0), "') of shape ", dY.ShapeString(),
               " is not a broadcast of input 1 ('", this->def().input(1), "') of shape ", X.ShapeString());
    const math::ReduceToShapeIndex r = math::MakeReduceToShapeIndex(out, X.shape());
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    math::ReduceSumToShape<Context>(r, dX->numel(), dY.template data<float>(), dX->template mutable_data<float>(),
                                    &this->context_);
  }
};

}  // namespace hetnet
