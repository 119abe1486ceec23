// CastLike(X, like) -> Y: X converted to the dtype of input `like` (read at run time; its values are
// not used), element by element as Cast converts (CastTensorData; arg saturate as Cast's). What the ONNX importer emits for
// ONNX CastLike when the model does not declare the type of `like`.
#pragma once

#include "operators/cast_ops.h"

namespace hetnet {

template <class Context>
class CastLikeOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor &X = this->Input(0), &like = this->Input(1);
    const DataType to = like.dtype();
    HN_ENFORCE(CastableType(X.dtype()), this->type(), ": input 0 ('", this->def().input(0), "') is ",
               DataTypeName(X.dtype()), "; only numeric and bool tensors can be cast");
    HN_ENFORCE(CastableType(to), this->type(), ": input 1 ('", this->def().input(1), "') is ", DataTypeName(to),
               "; only a numeric or bool dtype can be cast to");
    CastTensorData(*this, X, to, false, this->template GetSingleArgument<int>("saturate", 1) != 0,
                   CastRoundModeArg(this->def()), this->Output(0, X.shape(), to), &this->context_);
  }
};

}  // namespace hetnet
