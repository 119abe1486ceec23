// ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceProd / ReduceLogSumExp(X [, axes]) -> Y over
// the axes (default all; negative counts from the end; a repeated or out-of-range axis is an error)
// with keepdims (default 1): reduced dims become 1, or are dropped with keepdims=0. The axes come from
// arg `axes` or, ONNX-style, from the optional int32/int64 input 1 (read at run time on the CPU).
// Empty axes reduce everything unless noop_with_empty_axes=1, which reduces nothing (Y is X).
// Sum, Max, Min and Prod take float, double, int32, int64 (Max and Min also bool); Mean and LogSumExp
// (log of the sum of exp, computed stably) float and double. An empty reduction gives NaN for Mean
// (0/0), -inf for Max and LogSumExp, +inf for Min, 1 for Prod, 0 for Sum.
// Gradients <Op>Gradient(dY, X, Y [, axes]) -> dX = dY broadcast back (divided by the reduced count for
// Mean); Sum and Mean only, float32.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/host_device.h"

namespace hetnet {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kLogSumExp };

struct ReducePlan {
  StridedIndex kept;     // output element -> X offset of its first reduced element
  StridedIndex reduced;  // reduced element r -> X offset relative to that
  StridedIndex back;     // X element -> Y element (for the gradient)
  int64_t y_numel = 1, count = 1;  // count: elements reduced into each output
  std::vector<int64_t> y_shape;
};

// The plan for input 0 of shape x; axes from `runtime_axes` when given (the values of input
// `axes_input`), else from arg `axes`.
ReducePlan ComputeReducePlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                             const std::vector<int64_t>* runtime_axes = nullptr, int axes_input = 1);
// The values of a 0-D or 1-D int32/int64 axes tensor (on the CPU): input `index` of def.
std::vector<int64_t> ReadAxesInput(const caffe2::OperatorDef& def, const Tensor& axes, int index);

template <typename T>
using ReduceAccOf = std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;

// Sum (kSum, kMean), product, maximum or minimum of base[reduced.Offset(r)] for r < count.
template <typename T>
HN_HOST_DEVICE inline ReduceAccOf<T> ReduceAccumulate(ReduceKind kind, const T* base, const StridedIndex& reduced,
                                                     int64_t count) {
  using Acc = ReduceAccOf<T>;
  Acc acc = kind == ReduceKind::kProd ? 1 : 0;
  if constexpr (std::is_floating_point<T>::value) {
    if (kind == ReduceKind::kMax) acc = -std::numeric_limits<double>::infinity();
    if (kind == ReduceKind::kMin) acc = std::numeric_limits<double>::infinity();
  } else {
    if (kind == ReduceKind::kMax) acc = static_cast<Acc>(std::numeric_limits<T>::lowest());
    if (kind == ReduceKind::kMin) acc = static_cast<Acc>(std::numeric_limits<T>::max());
  }
  for (int64_t r = 0; r < count; ++r) {
    const Acc v = static_cast<Acc>(base[reduced.Offset(r)]);
    switch (kind) {
      case ReduceKind::kProd:
        if constexpr (std::is_floating_point<T>::value) acc *= v;
        else acc = static_cast<Acc>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));  // wraps, as ONNX
        break;
      case ReduceKind::kMax: if (v > acc || v != v) acc = v; break;  // NaN propagates, as numpy
      case ReduceKind::kMin: if (v < acc || v != v) acc = v; break;
      default:
        if constexpr (std::is_floating_point<T>::value) acc += v;
        else acc = static_cast<Acc>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
        break;
    }
    if (acc != acc) break;
  }
  return acc;
}

// The reduction of one output element.
template <typename T>
HN_HOST_DEVICE inline T ReduceOne(ReduceKind kind, const T* base, const StridedIndex& reduced, int64_t count) {
  using Acc = ReduceAccOf<T>;
  if constexpr (std::is_floating_point<T>::value) {
    if (kind == ReduceKind::kLogSumExp) {  // max + log(sum(exp(x - max))): no overflow
      const double m = ReduceAccumulate<T>(ReduceKind::kMax, base, reduced, count);
      if (m != m || m == std::numeric_limits<double>::infinity() || m == -std::numeric_limits<double>::infinity())
        return static_cast<T>(m);  // NaN, +inf, or -inf (also the empty set: log 0)
      double s = 0;
      for (int64_t r = 0; r < count; ++r) s += exp(static_cast<double>(base[reduced.Offset(r)]) - m);
      return static_cast<T>(m + log(s));
    }
  }
  const Acc acc = ReduceAccumulate<T>(kind, base, reduced, count);
  if (kind == ReduceKind::kMean)
    return count > 0 ? static_cast<T>(acc / static_cast<Acc>(count)) : std::numeric_limits<T>::quiet_NaN();
  return static_cast<T>(acc);
}

// y[o] = the reduction over the plan; T in float, double, int32_t, int64_t, bool.
template <typename T, class Context>
void ReduceKernel(const ReducePlan& p, ReduceKind kind, const T* x, T* y, Context* ctx);
// dx[i] = dy[back(i)] * scale.
template <class Context>
void ReduceGradientKernel(const ReducePlan& p, int64_t x_numel, float scale, const float* dy, float* dx, Context* ctx);

// The plan of an op whose input `axes_input` (if present) holds the axes.
inline ReducePlan PlanFor(const OperatorBase& op, const Tensor& X, int axes_input) {
  if (op.InputSize() <= axes_input) return ComputeReducePlan(op.def(), X.shape());
  const std::vector<int64_t> axes = ReadAxesInput(op.def(), op.InputTensor(axes_input), axes_input);
  return ComputeReducePlan(op.def(), X.shape(), &axes, axes_input);
}

template <class Context, ReduceKind kKind>
class ReduceOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const ReducePlan p = PlanFor(*this, X, 1);
    constexpr bool kInts = kKind != ReduceKind::kMean && kKind != ReduceKind::kLogSumExp;
    constexpr bool kBool = kKind == ReduceKind::kMax || kKind == ReduceKind::kMin;
    switch (X.dtype()) {
      case DataType::Float: return Run<float>(X, p);
      case DataType::Double: return Run<double>(X, p);
      case DataType::Int32: if (kInts) return Run<int32_t>(X, p); break;
      case DataType::Int64: if (kInts) return Run<int64_t>(X, p); break;
      case DataType::Bool: if (kBool) return Run<bool>(X, p); break;
      default: break;
    }
    HN_THROW(kInvalidArgument, this->type(), ": input 0 ('", this->def().input(0), "') is ", DataTypeName(X.dtype()),
             " but ", !kInts ? "float32 or float64" : kBool ? "float32, float64, int32, int64 or bool"
                                                           : "float32, float64, int32 or int64", " is required");
  }

 private:
  template <typename T>
  void Run(const Tensor& X, const ReducePlan& p) {
    Tensor* Y = this->Output(0, p.y_shape, X.dtype());
    ReduceKernel<T, Context>(p, kKind, X.template data<T>(), Y->template mutable_data<T>(), &this->context_);
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
    const ReducePlan p = PlanFor(*this, X, 3);
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
