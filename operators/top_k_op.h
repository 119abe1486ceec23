// TopK(X, [k]) -> (Values, Indices, [FlattenIndices]), Caffe2's: the k largest entries of X along
// `axis` (arg, default -1), largest first; equal values keep the lower index first. k comes from the
// arg `k` or, when given, a one-element int32/int64 input 1 (read on the host). Indices are int64
// positions along the axis; the optional third output holds, for every entry of Values, its position
// in X flattened (a 1-D int64 tensor). k larger than the axis pads Values with 0 and both index
// outputs with -1, as Caffe2. NaN ranks above every number (Caffe2's heap left that order undefined).
// Float32 as Caffe2 registered it, also float64 and the integer dtypes, on every device; arg
// `largest` = 0 (ONNX's) takes the k smallest, smallest first (NaN still first).
// TopKGradient(dValues, Indices, X) -> dX: dValues scattered to the recorded positions, 0 elsewhere;
// index -1 (padding) is skipped.
#pragma once

#include <type_traits>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/dtype_dispatch.h"

namespace hetnet {

// X viewed as [outer, n, inner]; Values as [outer, k, inner]. A "column" is one (outer, inner) pair.
struct TopKGeom {
  int64_t outer = 1, n = 1, inner = 1, k = 1;
};

// True when (a at index ia) comes before (b at index ib) in TopK's output order.
template <typename T>
HN_HOST_DEVICE inline bool TopKBefore(T a, int64_t ia, T b, int64_t ib, bool largest = true) {
  bool an = false, bn = false;  // NaN: floating point only (no self-compare of integers)
  if constexpr (std::is_floating_point<T>::value) an = a != a, bn = b != b;
  if (an != bn) return an;
  if (!an && a != b) return largest ? a > b : a < b;
  return ia < ib;
}

// One column: k selection passes, each taking the first entry (in output order) after the previous
// pick. O(n * k) without scratch memory, so the CPU loop and one CUDA thread run the same code.
template <typename T>
HN_HOST_DEVICE inline void TopKColumn(int64_t c, TopKGeom g, const T* x, T* vals, int64_t* idx, int64_t* flat,
                                      bool largest = true) {
  const int64_t o = c / g.inner, j = c % g.inner;
  const int64_t src = o * g.n * g.inner + j, dst = o * g.k * g.inner + j;
  T prev_v = T(0);
  int64_t prev_i = -1;
  for (int64_t r = 0; r < g.k; ++r) {
    int64_t best = -1;
    T best_v = T(0);
    if (r < g.n) {
      for (int64_t t = 0; t < g.n; ++t) {
        const T v = x[src + t * g.inner];
        if (prev_i >= 0 && !TopKBefore(prev_v, prev_i, v, t, largest)) continue;  // already taken
        if (best < 0 || TopKBefore(v, t, best_v, best, largest)) {
          best = t;
          best_v = v;
        }
      }
    }
    const int64_t out = dst + r * g.inner;
    vals[out] = best < 0 ? T(0) : best_v;
    idx[out] = best;
    if (flat) flat[out] = best < 0 ? -1 : src + best * g.inner;
    prev_v = best_v;
    prev_i = best;
  }
}

// One column of dX: zeros, then dValues at the recorded positions (indices outside [0, n) skipped).
HN_HOST_DEVICE inline void TopKGradColumn(int64_t c, TopKGeom g, const float* dv, const int64_t* idx, float* dx) {
  const int64_t o = c / g.inner, j = c % g.inner;
  const int64_t src = o * g.k * g.inner + j, dst = o * g.n * g.inner + j;
  for (int64_t t = 0; t < g.n; ++t) dx[dst + t * g.inner] = 0.f;
  for (int64_t r = 0; r < g.k; ++r) {
    const int64_t i = idx[src + r * g.inner];
    if (i >= 0 && i < g.n) dx[dst + i * g.inner] = dv[src + r * g.inner];
  }
}

// The forward for x and vals of dtype t (DispatchRealOrIntegerType's).
template <class Context>
void TopKForward(const caffe2::OperatorDef& def, DataType t, TopKGeom g, const void* x, void* vals, int64_t* idx,
                 int64_t* flat, bool largest, Context* ctx);
template <class Context>
void TopKBackward(TopKGeom g, const float* dv, const int64_t* idx, float* dx, Context* ctx);

// Geometry of X (shape `x`) for `k` along the canonical `axis`.
TopKGeom MakeTopKGeom(const std::vector<int64_t>& x, int64_t k, int axis);
// k from arg `k` or input 1 (copied to the host), checked to be >= 1.
int64_t ReadTopK(OperatorBase* op, const caffe2::OperatorDef& def, DeviceContext* ctx);

template <class Context>
class TopKOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor& X = this->Input(0);
    const bool largest = this->template GetSingleArgument<int>("largest", 1) != 0;
    const int axis = CanonicalAxisFor(def, this->template GetSingleArgument<int>("axis", -1), X.ndim(), 0);
    const TopKGeom g = MakeTopKGeom(X.shape(), ReadTopK(this, def, &this->context_), axis);
    std::vector<int64_t> out_shape = X.shape();
    out_shape[axis] = g.k;
    Tensor* V = this->Output(0, out_shape, X.dtype());
    Tensor* I = this->Output(1, out_shape, DataType::Int64);
    int64_t* flat = nullptr;
    if (this->OutputSize() > 2) flat = this->Output(2, {V->numel()}, DataType::Int64)->template mutable_data<int64_t>();
    TopKForward<Context>(def, X.dtype(), g, X.raw_data(), V->raw_mutable_data(X.dtype()),
                         I->template mutable_data<int64_t>(), flat, largest, &this->context_);
  }
};

template <class Context>
class TopKGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &dV = this->Input(0), &I = this->Input(1), &X = this->Input(2);
    EnforceFloatInput(def, dV, 0);
    EnforceDtype(def, I, 1, DataType::Int64);
    EnforceSameShape(def, dV, 0, I, 1);
    HN_ENFORCE(dV.ndim() == X.ndim() && X.ndim() > 0, def.type(), ": input 0 ('", def.input(0), "') of shape ",
               dV.ShapeString(), " and input 2 ('", def.input(2), "') of shape ", X.ShapeString(),
               " must have the same number of dims");
    const int axis = CanonicalAxisFor(def, this->template GetSingleArgument<int>("axis", -1), X.ndim(), 2);
    for (int d = 0; d < X.ndim(); ++d)
      HN_ENFORCE(d == axis || dV.shape()[d] == X.shape()[d], def.type(), ": input 0 ('", def.input(0),
                 "') of shape ", dV.ShapeString(), " differs from input 2 ('", def.input(2), "') of shape ",
                 X.ShapeString(), " outside axis ", axis);
    const TopKGeom g = MakeTopKGeom(X.shape(), dV.shape()[axis], axis);
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    TopKBackward<Context>(g, dV.template data<float>(), I.template data<int64_t>(),
                          dX->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
