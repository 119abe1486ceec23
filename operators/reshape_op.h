// Reshape(data[, new_shape]) -> reshaped, old_shape. The new shape comes from arg `shape` or from a
// 1-D int64/int32 input 1 (on CPU for any device); 0 copies the input's dim, -1 is inferred.
// old_shape is an int64 1-D tensor on CPU. In place (reshaped == data) only relabels the dims.
#pragma once

#include "core/operator.h"
#include "core/reduced_precision.h"

namespace hetnet {

// Reduced-precision inference (core/reduced_precision.h): X of any dtype; Reshape's shape input and
// old_shape output stay integers. Registered on every device that has the ops.
inline ReducedPrecisionKernel NarrowReshapeKernel() {
  return {{DataType::BFloat16, DataType::Float16}, 1, /*follower=*/true, nullptr, 1};
}

// The output shape for `requested` applied to `in`; messages name the op's blobs.
std::vector<int64_t> ComputeReshapeShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& requested);

template <class Context>
class ReshapeOp final : public Operator<Context> {
 public:
  ReshapeOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), shape_(this->template GetRepeatedArgument<int64_t>("shape")) {
    HN_ENFORCE(!(this->HasArgument("shape") && def.input_size() > 1),
               "Reshape: give the new shape either as argument 'shape' or as input 1 ('", def.input(1), "'), not both");
    HN_ENFORCE(this->HasArgument("shape") || def.input_size() > 1,
               "Reshape: the new shape is missing: set argument 'shape' or pass it as input 1");
  }

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    std::vector<int64_t> requested = shape_;
    if (this->InputSize() > 1) {
      const Tensor& S = this->Input(1);
      HN_ENFORCE(S.ndim() == 1, "Reshape: input 1 ('", this->def().input(1), "') must be 1-D, has shape ",
                 S.ShapeString());
      if (S.dtype() == DataType::Int64) {
        requested.assign(S.template data<int64_t>(), S.template data<int64_t>() + S.numel());
      } else {
        HN_ENFORCE(S.dtype() == DataType::Int32, "Reshape: input 1 ('", this->def().input(1), "') is ",
                   DataTypeName(S.dtype()), " but int64 or int32 is required");
        requested.assign(S.template data<int32_t>(), S.template data<int32_t>() + S.numel());
      }
    }
    const std::vector<int64_t> old = X.shape();
    std::vector<int64_t> out_shape = ComputeReshapeShape(this->def(), old, requested);
    Tensor* old_shape = this->Output(1, {static_cast<int64_t>(old.size())}, DataType::Int64);
    std::copy(old.begin(), old.end(), old_shape->template mutable_data<int64_t>());
    Tensor* Y = this->Output(0);
    if (Y != &X) Y->CopyFrom(X, &this->context_);
    Y->Resize(std::move(out_shape));
  }

 private:
  std::vector<int64_t> shape_;
};

// Flatten: [d0, ..., dn] -> [d0 * ... * d(axis-1), d(axis) * ... * dn] (axis default 1).
template <class Context>
class FlattenOp final : public Operator<Context> {
 public:
  FlattenOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 1)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    HN_ENFORCE(axis_ >= 0 && axis_ <= X.ndim(), "Flatten: axis ", axis_, " is out of range for input 0 ('",
               this->def().input(0), "') of shape ", X.ShapeString());
    std::vector<int64_t> shape{X.size_to_dim(axis_), X.size_from_dim(axis_)};
    Tensor* Y = this->Output(0);
    if (Y != &X) Y->CopyFrom(X, &this->context_);
    Y->Resize(std::move(shape));
  }

 private:
  int axis_;
};

// ResizeLike(data, like): data's elements with like's shape (Flatten's gradient).
template <class Context>
class ResizeLikeOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& L = this->Input(1);
    HN_ENFORCE(X.numel() == L.numel(), "ResizeLike: input 0 ('", this->def().input(0), "') of shape ",
               X.ShapeString(), " has ", X.numel(), " elements but input 1 ('", this->def().input(1), "') of shape ",
               L.ShapeString(), " has ", L.numel());
    std::vector<int64_t> shape = L.shape();
    Tensor* Y = this->Output(0);
    if (Y != &X) Y->CopyFrom(X, &this->context_);
    Y->Resize(std::move(shape));
  }
};

}  // namespace hetnet
