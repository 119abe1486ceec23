// Shape(data) -> shape: data's dims as a 1-D int64 tensor on CPU (for any device: it feeds shape
// inputs such as Reshape's and Expand's, which live on CPU). Caffe2's optional `axes` argument
// selects dims (negative counts from the end). No gradient (Caffe2's Shape has none).
#pragma once

#include "core/operator.h"

namespace hetnet {

// The dims Shape outputs for `dims` under the def's `axes`; messages name the op's input.
std::vector<int64_t> ShapeOpOutput(const caffe2::OperatorDef& def, const std::vector<int64_t>& dims);

template <class Context>
class ShapeOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const std::vector<int64_t> v = ShapeOpOutput(this->def(), this->Input(0).shape());
    Tensor* Y = this->Output(0, {static_cast<int64_t>(v.size())}, DataType::Int64);  // on CPU (schema)
    std::copy(v.begin(), v.end(), Y->template mutable_data<int64_t>());
  }
};

}  // namespace hetnet
