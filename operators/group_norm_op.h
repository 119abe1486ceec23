// GroupNorm(X, gamma, beta) -> (Y, mean, inv_std), Caffe2's: the C channels of X are split into G
// groups (arg `group`, default 32; `num_groups` accepted as its other name) of D = C / G channels;
// each (n, g) group is normalized over its D channels and spatial positions with the biased variance,
//   Y = (X - mean) * inv_std * gamma[c] + beta[c],  inv_std = 1 / sqrt(var + epsilon)
// (arg `epsilon`, default 1e-5). Arg `order` NCHW (default) or NHWC; X has at least 2 dims (Caffe2
// asked for 4 or 5). mean and inv_std are [N, G] (Caffe2 calls the third output "std" but stores
// 1 / std, as here).
// GroupNormGradient(dY, X, gamma, beta, mean, inv_std) -> (dX, dgamma, dbeta), Caffe2's inputs.
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// X as [N, G, D, S] in NCHW or [N, S, G, D] in NHWC; a group i = n * G + g.
struct GroupNormGeom {
  int64_t n = 1, g = 1, d = 1, s = 1;
  bool nhwc = false;
  // Offset of (group i, channel j of the group, spatial p), and that element's channel.
  HN_HOST_DEVICE int64_t At(int64_t i, int64_t j, int64_t p) const {
    const int64_t nn = i / g, gg = i % g;
    return nhwc ? (nn * s + p) * g * d + gg * d + j : ((nn * g + gg) * d + j) * s + p;
  }
};

HN_HOST_DEVICE inline void GroupNormGroup(int64_t i, GroupNormGeom G, float eps, const float* x, const float* gamma,
                                          const float* beta, float* y, float* mean, float* inv) {
  const int64_t m = G.d * G.s;
  double sum = 0, sq = 0;
  for (int64_t j = 0; j < G.d; ++j)
    for (int64_t p = 0; p < G.s; ++p) sum += x[G.At(i, j, p)];
  const double mu = m ? sum / m : 0.0;
  for (int64_t j = 0; j < G.d; ++j)
    for (int64_t p = 0; p < G.s; ++p) sq += (x[G.At(i, j, p)] - mu) * (x[G.At(i, j, p)] - mu);
  const double is = 1.0 / sqrt((m ? sq / m : 0.0) + eps);
  mean[i] = static_cast<float>(mu);
  inv[i] = static_cast<float>(is);
  for (int64_t j = 0; j < G.d; ++j) {
    const int64_t c = (i % G.g) * G.d + j;
    for (int64_t p = 0; p < G.s; ++p) {
      const int64_t k = G.At(i, j, p);
      y[k] = static_cast<float>((x[k] - mu) * is * gamma[c] + beta[c]);
    }
  }
}

// dX of group i: with xhat = (x - mean) * inv and e = dY * gamma[c],
//   dX = inv * (e - avg(e) - xhat * avg(e * xhat)), averages over the group.
HN_HOST_DEVICE inline void GroupNormGradGroup(int64_t i, GroupNormGeom G, const float* dy, const float* x,
                                              const float* gamma, const float* mean, const float* inv, float* dx) {
  const double mu = mean[i], is = inv[i];
  const int64_t m = G.d * G.s;
  double a = 0, b = 0;
  for (int64_t j = 0; j < G.d; ++j) {
    const double gm = gamma[(i % G.g) * G.d + j];
    for (int64_t p = 0; p < G.s; ++p) {
      const int64_t k = G.At(i, j, p);
      a += dy[k] * gm;
      b += dy[k] * gm * (x[k] - mu) * is;
    }
  }
  a /= m;
  b /= m;
  for (int64_t j = 0; j < G.d; ++j) {
    const double gm = gamma[(i % G.g) * G.d + j];
    for (int64_t p = 0; p < G.s; ++p) {
      const int64_t k = G.At(i, j, p);
      dx[k] = static_cast<float>(is * (dy[k] * gm - a - (x[k] - mu) * is * b));
    }
  }
}

// dgamma[c] = sum over n, s of dY * xhat; dbeta[c] = sum of dY.
HN_HOST_DEVICE inline void GroupNormAffineGradChannel(int64_t c, GroupNormGeom G, const float* dy, const float* x,
                                                      const float* mean, const float* inv, float* dgamma,
                                                      float* dbeta) {
  const int64_t gg = c / G.d, j = c % G.d;
  double sg = 0, sb = 0;
  for (int64_t n = 0; n < G.n; ++n) {
    const int64_t i = n * G.g + gg;
    for (int64_t p = 0; p < G.s; ++p) {
      const int64_t k = G.At(i, j, p);
      sg += dy[k] * (x[k] - mean[i]) * inv[i];
      sb += dy[k];
    }
  }
  dgamma[c] = static_cast<float>(sg);
  dbeta[c] = static_cast<float>(sb);
}

template <class Context>
void GroupNormForward(GroupNormGeom G, float eps, const float* x, const float* gamma, const float* beta, float* y,
                      float* mean, float* inv, Context* ctx);
template <class Context>
void GroupNormBackward(GroupNormGeom G, const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* inv, float* dx, float* dgamma, float* dbeta, Context* ctx);

// Geometry from X's shape and the args; errors name input `input` (X) of def.
GroupNormGeom MakeGroupNormGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int input);
// gamma and beta (inputs ig, ig + 1) are float32 with C values each.
void CheckGroupNormAffine(const caffe2::OperatorDef& def, GroupNormGeom G, const Tensor& gamma, const Tensor& beta,
                          int ig);

template <class Context>
class GroupNormOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &X = this->Input(0), &gamma = this->Input(1), &beta = this->Input(2);
    EnforceFloatInput(def, X, 0);
    const GroupNormGeom G = MakeGroupNormGeom(def, X.shape(), 0);
    CheckGroupNormAffine(def, G, gamma, beta, 1);
    Tensor* mean = this->Output(1, {G.n, G.g}, DataType::Float);
    Tensor* inv = this->Output(2, {G.n, G.g}, DataType::Float);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    GroupNormForward<Context>(G, this->template GetSingleArgument<float>("epsilon", 1e-5f), X.template data<float>(),
                              gamma.template data<float>(), beta.template data<float>(),
                              Y->template mutable_data<float>(), mean->template mutable_data<float>(),
                              inv->template mutable_data<float>(), &this->context_);
  }
};

template <class Context>
class GroupNormGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &dY = this->Input(0), &X = this->Input(1), &gamma = this->Input(2);
    for (int k = 0; k < 6; ++k) EnforceFloatInput(def, this->Input(k), k);
    EnforceSameShape(def, dY, 0, X, 1);
    const GroupNormGeom G = MakeGroupNormGeom(def, X.shape(), 1);
    CheckGroupNormAffine(def, G, gamma, this->Input(3), 2);
    for (int k = 4; k < 6; ++k)
      HN_ENFORCE(this->Input(k).numel() == G.n * G.g, def.type(), ": input ", k, " ('", def.input(k),
                 "') must hold N * G = ", G.n * G.g, " values, got ", this->Input(k).ShapeString());
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    Tensor* dgamma = this->Output(1, gamma.shape(), DataType::Float);
    Tensor* dbeta = this->Output(2, gamma.shape(), DataType::Float);
    GroupNormBackward<Context>(G, dY.template data<float>(), X.template data<float>(), gamma.template data<float>(),
                               this->Input(4).template data<float>(), this->Input(5).template data<float>(),
                               dX->template mutable_data<float>(), dgamma->template mutable_data<float>(),
                               dbeta->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
