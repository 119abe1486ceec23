// ReduceSum / ReduceMean(X) -> Y over `axes` (default all; negative counts from the end) with keepdims
// (default 1): reduced dims become 1, or are dropped with keepdims=0. ReduceSum takes float, double, int32,
// int64; ReduceMean float and double (an empty reduction gives NaN, as 0/0).
// Gradients <Op>Gradient(dY, X, Y) -> dX = dY broadcast back (divided by the reduced count for Mean); float32.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

struct ReducePlan {
  StridedIndex kept;     // output element -> X offset of its first reduced element
  StridedIndex reduced;  // reduced element r -> X offset relative to that
  StridedIndex back;     // X element -> Y element (for the gradient)
  int64_t y_numel = 1, count = 1;  // count: elements reduced into each output
  std::vector<int64_t> y_shape;
};

ReducePlan ComputeReducePlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x);

// y[o] = sum (mean) over the plan; T in float, double, int32_t, int64_t.
template <typename T, class Context>
void ReduceKernel(const ReducePlan& p, bool mean, const T* x, T* y, Context* ctx);
// dx[i] = dy[back(i)] * scale.
template <class Context>
void ReduceGradientKernel(const ReducePlan& p, int64_t x_numel, float scale, const float* dy, float* dx, Context* ctx);

template <class Context, bool kMean>
class ReduceOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const ReducePlan p = ComputeReducePlan(this->def(), X.shape());
    switch (X.dtype()) {
      case DataType::Float: return Run<float>(X, p);
      case DataType::Double: return Run<double>(X, p);
      case DataType::Int32: if (!kMean) return Run<int32_t>(X, p); break;
      case DataType::Int64: if (!kMean) return Run<int64_t>(X, p); break;
      default: break;
    }
    HN_THROW(kInvalidArgument, this->type(), ": input 0 ('", this->def().input(0), "') is ", DataTypeName(X.dtype()),
             " but ", kMean ? "float32 or float64" : "float32, float64, int32 or int64", " is required");
  }

 private:
  template <typename T>
  void Run(const Tensor& X, const ReducePlan& p) {
    Tensor* Y = this->Output(0, p.y_shape, X.dtype());
    ReduceKernel<T, Context>(p, kMean, X.template data<T>(), Y->template mutable_data<T>(), &this->context_);
  }
};

template <class Context, bool kMean>
class ReduceGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& dY = this->Input(0);
    const Tensor& X = this->Input(1);
    EnforceFloatInput(this->def(), dY, 0);
    const ReducePlan p = ComputeReducePlan(this->def(), X.shape());
    HN_ENFORCE(dY.numel() == p.y_numel, this->type(), ": input 0 ('", this->def().input(0), "') has shape ",
               dY.ShapeString(), " but the reduction of input 1 ('", this->def().input(1), "') has shape ",
               ShapeToString(p.y_shape));
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    const float scale = kMean ? 1.f / static_cast<float>(p.count) : 1.f;
    ReduceGradientKernel<Context>(p, X.numel(), scale, dY.template data<float>(), dX->template mutable_data<float>(),
                                  &this->context_);
  }
};

}  // namespace hetnet
