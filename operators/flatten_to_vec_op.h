// FlattenToVec(X) -> Y: X's elements as a 1-D tensor of X.numel() (in place allowed). Any dtype.
// Gradient: ResizeLike(dY, X).
#pragma once

#include "core/operator.h"

namespace hetnet {

template <class Context>
class FlattenToVecOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const int64_t n = X.numel();
    Tensor* Y = this->Output(0);
    if (Y != &X) Y->CopyFrom(X, &this->context_);
    Y->Resize({n});
  }
};

}  // namespace hetnet
