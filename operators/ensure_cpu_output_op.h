// EnsureCPUOutput(input) -> output, Caffe2's: a copy of the input that always lives on the CPU,
// whatever device the op runs on (a device-to-host copy for a GPU op; a plain deep copy on CPU; never in
// place, as Caffe2). Any dtype, strings included on CPU. No gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

template <class Context>
class EnsureCPUOutputOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    Tensor* Y = this->Output(0);  // on CPU: the schema says so for every device
    HN_CHECK_KIND(kUnsupported, X.device().is_cpu() || X.dtype() != DataType::String, this->type(), ": input 0 ('",
                  this->def().input(0), "') is a string tensor on ", X.device().str(),
                  "; string tensors live on CPU only");
    Y->CopyFrom(X, &this->context_);
    // CPU readers may run as soon as this op returns.
    this->context_.FinishDeviceComputation();
  }
};

}  // namespace hetnet
