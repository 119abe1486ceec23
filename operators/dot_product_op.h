// DotProduct(X, Y) -> Z, Caffe2's: X and Y of one shape viewed as [N, D] (N = dims[0], or 1 for a
// scalar); Z[i] = sum_j X[i, j] * Y[i, j], shaped [N]. (Caffe2's padding of unequal widths,
// pad_value / replicate, is refused.)
// DotProductGradient(X, Y, dZ) -> (dX, dY): dX = Y * dZ[i], dY = X * dZ[i].
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

inline int64_t DotProductRows(const std::vector<int64_t>& s) { return s.empty() ? 1 : s[0]; }

class DotProductOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    HN_ENFORCE(!HasArgument("pad_value") && !HasArgument("replicate"), def.type(),
               ": pad_value / replicate (inputs of different widths) are not supported; give X and Y one shape");
    const Tensor &X = Input(0), &Y = Input(1);
    EnforceFloatInput(def, X, 0);
    EnforceFloatInput(def, Y, 1);
    EnforceSameShape(def, X, 0, Y, 1);
    const int64_t n = DotProductRows(X.shape()), d = n > 0 ? X.numel() / n : 0;
    const float *x = X.data<float>(), *y = Y.data<float>();
    float* z = Output(0, {n}, DataType::Float)->mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;  // float64 accumulation, one row at a time
      for (int64_t j = 0; j < d; ++j) s += static_cast<double>(x[i * d + j]) * y[i * d + j];
      z[i] = static_cast<float>(s);
    }
  }
};

class DotProductGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &X = Input(0), &Y = Input(1), &dZ = Input(2);
    for (int k = 0; k < 3; ++k) EnforceFloatInput(def, Input(k), k);
    EnforceSameShape(def, X, 0, Y, 1);
    const int64_t n = DotProductRows(X.shape()), d = n > 0 ? X.numel() / n : 0;
    HN_ENFORCE(dZ.numel() == n, def.type(), ": input 2 ('", def.input(2), "') has ", dZ.numel(),
               " values but the dot product has ", n);
    // Read everything before writing: dX / dY may share a blob with X or Y.
    std::vector<float> x(X.data<float>(), X.data<float>() + X.numel());
    std::vector<float> y(Y.data<float>(), Y.data<float>() + Y.numel());
    std::vector<float> dz(dZ.data<float>(), dZ.data<float>() + n);
    const std::vector<int64_t> shape = X.shape();
    float* dx = Output(0, shape, DataType::Float)->mutable_data<float>();
    float* dy = Output(1, shape, DataType::Float)->mutable_data<float>();
    for (int64_t t = 0; t < n * d; ++t) {
      dx[t] = y[t] * dz[t / d];
      dy[t] = x[t] * dz[t / d];
    }
  }
};

}  // namespace hetnet
