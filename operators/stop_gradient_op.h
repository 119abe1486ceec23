// StopGradient: Y = X (in place allowed); its gradient is none, so autodiff stops here.
#pragma once

#include "core/operator.h"

namespace hetnet {

template <class Context>
class StopGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    if (this->IsInputOutputAlias(0, 0)) return;
    HN_ENFORCE(X.dtype() != DataType::String, "StopGradient: string tensors are not supported (input '",
               this->def().input(0), "')");
    Tensor* Y = this->Output(0, X.shape(), X.dtype());
    if (X.nbytes())
      this->context_.CopyBytes(X.nbytes(), X.raw_data(), X.device(), Y->raw_mutable_data(X.dtype()), Y->device());
  }
};

}  // namespace hetnet
