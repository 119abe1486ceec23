// Iter: the training iteration counter, an int64 tensor of shape [1] on CPU, incremented in place.
// With no input and an empty output blob it starts at 0 (so the first run leaves 1), as Caffe2's.
#pragma once

#include "core/operator.h"

namespace hetnet {

template <class Context>
class IterOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    Blob* blob = this->OutputBlob(0);
    const bool fresh = blob->empty() || !blob->IsTensor() || !blob->GetTensor().initialized();
    if (fresh) {
      HN_ENFORCE(this->InputSize() == 0, "Iter: input '", this->def().input(0),
                 "' holds no counter; initialize it with ConstantFill(shape=[1], value=0, dtype=INT64)");
      Tensor* t = this->Output(0, {1}, DataType::Int64);
      t->template mutable_data<int64_t>()[0] = 0;
    }
    Tensor* t = this->Output(0);
    HN_ENFORCE(t->dtype() == DataType::Int64 && t->numel() == 1, "Iter: '", this->def().output(0),
               "' must be an int64 tensor of one element, is ", t->DebugString());
    ++t->template mutable_data_existing<int64_t>()[0];
  }
};

}  // namespace hetnet
