// SquaredL2Distance(X, Y) -> Z, Caffe2's: X and Y of one shape viewed as [N, D] (N = dims[0], or 1
// for a scalar); Z[i] = 0.5 * sum_j (X[i, j] - Y[i, j])^2, shaped [N].
// SquaredL2DistanceGradient(X, Y, dZ) -> (dX, dY): dX = (X - Y) * dZ[i], dY = -dX.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

HN_HOST_DEVICE inline void SquaredL2Row(int64_t i, int64_t d, const float* x, const float* y, float* z) {
  double s = 0;
  for (int64_t j = 0; j < d; ++j) {
    const double t = static_cast<double>(x[i * d + j]) - y[i * d + j];
    s += t * t;
  }
  z[i] = static_cast<float>(0.5 * s);
}
HN_HOST_DEVICE inline void SquaredL2GradElem(int64_t t, int64_t d, const float* x, const float* y, const float* dz,
                                             float* dx, float* dy) {
  const float g = (x[t] - y[t]) * dz[t / d];
  dx[t] = g;
  dy[t] = -g;
}

template <class Context>
void SquaredL2Forward(int64_t n, int64_t d, const float* x, const float* y, float* z, Context* ctx);
template <class Context>
void SquaredL2Backward(int64_t n, int64_t d, const float* x, const float* y, const float* dz, float* dx, float* dy,
                       Context* ctx);

inline int64_t SquaredL2Rows(const std::vector<int64_t>& s) { return s.empty() ? 1 : s[0]; }

template <class Context>
class SquaredL2DistanceOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor &X = this->Input(0), &Y = this->Input(1);
    EnforceFloatInput(this->def(), X, 0);
    EnforceFloatInput(this->def(), Y, 1);
    EnforceSameShape(this->def(), X, 0, Y, 1);
    const int64_t n = SquaredL2Rows(X.shape()), d = n > 0 ? X.numel() / n : 0;
    Tensor* Z = this->Output(0, {n}, DataType::Float);
    SquaredL2Forward<Context>(n, d, X.template data<float>(), Y.template data<float>(),
                              Z->template mutable_data<float>(), &this->context_);
  }
};

template <class Context>
class SquaredL2DistanceGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &X = this->Input(0), &Y = this->Input(1), &dZ = this->Input(2);
    for (int k = 0; k < 3; ++k) EnforceFloatInput(def, this->Input(k), k);
    EnforceSameShape(def, X, 0, Y, 1);
    const int64_t n = SquaredL2Rows(X.shape()), d = n > 0 ? X.numel() / n : 0;
    HN_ENFORCE(dZ.numel() == n, def.type(), ": input 2 ('", def.input(2), "') has ", dZ.numel(),
               " values but the distance has ", n);
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    Tensor* dY = this->Output(1, X.shape(), DataType::Float);
    SquaredL2Backward<Context>(n, d, X.template data<float>(), Y.template data<float>(), dZ.template data<float>(),
                               dX->template mutable_data<float>(), dY->template mutable_data<float>(),
                               &this->context_);
  }
};

}  // namespace hetnet
