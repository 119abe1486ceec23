// InstanceNorm(X, scale, bias) -> (Y, [saved_mean, [saved_inv_stdev]]), Caffe2's: every (n, c) slice
// of X is normalized over its spatial positions with the biased variance,
//   Y = (X - mean) * inv_stdev * scale[c] + bias[c],  inv_stdev = 1 / sqrt(var + epsilon)
// (arg `epsilon`, default 1e-5). Arg `order` NCHW (default) or NHWC; X has at least 2 dims (Caffe2
// took 4; any number of spatial dims is accepted here). saved_mean and saved_inv_stdev are [N, C].
// May run in place (Y = X).
// InstanceNormGradient(X, scale, bias, dY, [saved_mean, saved_inv_stdev]) -> (dX, dscale, dbias):
// Caffe2's inputs; without the saved statistics they are recomputed from X.
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// X as N x C slices of S spatial positions; element (n, c, s) at n * sn + c * sc + s * ss.
struct InstanceNormGeom {
  int64_t n = 1, c = 1, s = 1;
  int64_t sn = 0, sc = 0, ss = 0;
  HN_HOST_DEVICE int64_t At(int64_t i, int64_t p) const { return (i / c) * sn + (i % c) * sc + p * ss; }
};

// Slice i = n * C + c: its mean and inverse stdev; then Y when y is not null.
HN_HOST_DEVICE inline void InstanceNormSlice(int64_t i, InstanceNormGeom g, float eps, const float* x,
                                             const float* scale, const float* bias, float* y, float* mean,
                                             float* inv) {
  double sum = 0, sq = 0;
  for (int64_t p = 0; p < g.s; ++p) sum += x[g.At(i, p)];
  const double mu = g.s ? sum / g.s : 0.0;
  for (int64_t p = 0; p < g.s; ++p) sq += (x[g.At(i, p)] - mu) * (x[g.At(i, p)] - mu);
  const double is = 1.0 / sqrt((g.s ? sq / g.s : 0.0) + eps);
  mean[i] = static_cast<float>(mu);
  inv[i] = static_cast<float>(is);
  if (!y) return;
  const int64_t c = i % g.c;
  for (int64_t p = 0; p < g.s; ++p) {
    const int64_t k = g.At(i, p);
    y[k] = static_cast<float>((x[k] - mu) * is * scale[c] + bias[c]);
  }
}

// dX of slice i: with xhat = (x - mean) * inv and d = dY * scale[c],
//   dX = inv * (d - avg(d) - xhat * avg(d * xhat)).
HN_HOST_DEVICE inline void InstanceNormGradSlice(int64_t i, InstanceNormGeom g, const float* x, const float* dy,
                                                 const float* scale, const float* mean, const float* inv,
                                                 float* dx) {
  const double mu = mean[i], is = inv[i], sc = scale[i % g.c];
  double a = 0, b = 0;
  for (int64_t p = 0; p < g.s; ++p) {
    const int64_t k = g.At(i, p);
    const double d = dy[k] * sc;
    a += d;
    b += d * (x[k] - mu) * is;
  }
  a /= g.s;
  b /= g.s;
  for (int64_t p = 0; p < g.s; ++p) {
    const int64_t k = g.At(i, p);
    dx[k] = static_cast<float>(is * (dy[k] * sc - a - (x[k] - mu) * is * b));
  }
}

// dscale[c] = sum over n, s of dY * xhat; dbias[c] = sum of dY.
HN_HOST_DEVICE inline void InstanceNormAffineGradChannel(int64_t c, InstanceNormGeom g, const float* x,
                                                         const float* dy, const float* mean, const float* inv,
                                                         float* dscale, float* dbias) {
  double sg = 0, sb = 0;
  for (int64_t n = 0; n < g.n; ++n) {
    const int64_t i = n * g.c + c;
    for (int64_t p = 0; p < g.s; ++p) {
      const int64_t k = g.At(i, p);
      sg += dy[k] * (x[k] - mean[i]) * inv[i];
      sb += dy[k];
    }
  }
  dscale[c] = static_cast<float>(sg);
  dbias[c] = static_cast<float>(sb);
}

template <class Context>
void InstanceNormForward(InstanceNormGeom g, float eps, const float* x, const float* scale, const float* bias,
                         float* y, float* mean, float* inv, Context* ctx);
template <class Context>
void InstanceNormBackward(InstanceNormGeom g, const float* x, const float* dy, const float* scale,
                          const float* mean, const float* inv, float* dx, float* dscale, float* dbias, Context* ctx);

// Geometry from X's shape and arg `order`; checks scale and bias (inputs 1, 2) hold C values each.
InstanceNormGeom MakeInstanceNormGeom(const caffe2::OperatorDef& def, const Tensor& X, const Tensor& scale,
                                      const Tensor& bias);

template <class Context>
class InstanceNormOp final : public Operator<Context> {
 public:
  InstanceNormOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)),
        mean_(this->device()),
        inv_(this->device()) {}
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &X = this->Input(0), &scale = this->Input(1), &bias = this->Input(2);
    const InstanceNormGeom g = MakeInstanceNormGeom(def, X, scale, bias);
    const std::vector<int64_t> nc{g.n, g.c};
    Tensor* mean = this->OutputSize() > 1 ? this->Output(1, nc, DataType::Float) : &mean_;
    Tensor* inv = this->OutputSize() > 2 ? this->Output(2, nc, DataType::Float) : &inv_;
    if (mean == &mean_) mean_.Resize(nc);
    if (inv == &inv_) inv_.Resize(nc);
    // Y may be X (in place): each slice reads all of its X before writing its Y.
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    InstanceNormForward<Context>(g, eps_, X.template data<float>(), scale.template data<float>(),
                                 bias.template data<float>(), Y->template mutable_data<float>(),
                                 mean->template mutable_data<float>(), inv->template mutable_data<float>(),
                                 &this->context_);
  }

 private:
  float eps_;
  Tensor mean_, inv_;  // statistics when the outputs are not asked for
};

template <class Context>
class InstanceNormGradientOp final : public Operator<Context> {
 public:
  InstanceNormGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)),
        mean_(this->device()),
        inv_(this->device()) {}
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &X = this->Input(0), &scale = this->Input(1), &dY = this->Input(3);
    const InstanceNormGeom g = MakeInstanceNormGeom(def, X, scale, this->Input(2));
    EnforceFloatInput(def, dY, 3);
    EnforceSameShape(def, dY, 3, X, 0);
    const float *mean, *inv;
    if (this->InputSize() == 6) {
      for (int k = 4; k < 6; ++k) {
        EnforceFloatInput(def, this->Input(k), k);
        HN_ENFORCE(this->Input(k).numel() == g.n * g.c, def.type(), ": input ", k, " ('", def.input(k),
                   "') must hold N * C = ", g.n * g.c, " values, got ", this->Input(k).ShapeString());
      }
      mean = this->Input(4).template data<float>();
      inv = this->Input(5).template data<float>();
    } else {
      mean_.Resize({g.n, g.c});
      inv_.Resize({g.n, g.c});
      InstanceNormForward<Context>(g, eps_, X.template data<float>(), nullptr, nullptr, nullptr,
                                   mean_.template mutable_data<float>(), inv_.template mutable_data<float>(),
                                   &this->context_);
      mean = mean_.template data<float>();
      inv = inv_.template data<float>();
    }
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    Tensor* dscale = this->Output(1, {g.c}, DataType::Float);
    Tensor* dbias = this->Output(2, {g.c}, DataType::Float);
    InstanceNormBackward<Context>(g, X.template data<float>(), dY.template data<float>(), scale.template data<float>(),
                                  mean, inv, dX->template mutable_data<float>(), dscale->template mutable_data<float>(),
                                  dbias->template mutable_data<float>(), &this->context_);
  }

 private:
  float eps_;
  Tensor mean_, inv_;
};

}  // namespace hetnet
