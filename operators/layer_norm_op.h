// LayerNorm(X, [gamma, beta]) -> (Y, mean, std), Caffe2's: X viewed as [M, N] with M = prod(dims[:axis])
// (arg `axis`, default 1, negative counts from the end) and N the rest; per row
//   mean = avg(x), std = sqrt(var(x) + epsilon) (arg `epsilon`, default 1e-5), Y = (x - mean) / std,
// then with arg elementwise_affine=1 (inputs gamma and beta, shaped dims[axis:]) Y = Y * gamma + beta.
// mean and std are shaped dims[:axis] + [1], as Caffe2's.
// LayerNormGradient(dY, Y, mean, std, X, [gamma]) -> (dX, [dgamma, dbeta]).
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

struct LayerNormGeom {
  int64_t m = 1, n = 1;
};

// One row of the forward pass (CPU loops rows, CUDA runs one thread per row).
HN_HOST_DEVICE inline void LayerNormRow(int64_t i, LayerNormGeom g, float eps, const float* x, const float* gamma,
                                        const float* beta, float* y, float* mean, float* stdev) {
  const float* xr = x + i * g.n;
  double s = 0, s2 = 0;
  for (int64_t j = 0; j < g.n; ++j) s += xr[j];
  const double mu = s / g.n;
  for (int64_t j = 0; j < g.n; ++j) s2 += (xr[j] - mu) * (xr[j] - mu);
  const double sd = sqrt(s2 / g.n + eps);
  mean[i] = static_cast<float>(mu);
  stdev[i] = static_cast<float>(sd);
  float* yr = y + i * g.n;
  for (int64_t j = 0; j < g.n; ++j) {
    const float v = static_cast<float>((xr[j] - mu) / sd);
    yr[j] = gamma ? v * gamma[j] + beta[j] : v;
  }
}

// dX for one row: dxhat = dY * gamma; dX = (dxhat - avg(dxhat) - xhat * avg(dxhat * xhat)) / std.
HN_HOST_DEVICE inline void LayerNormGradRow(int64_t i, LayerNormGeom g, const float* dy, const float* x,
                                            const float* mean, const float* stdev, const float* gamma, float* dx) {
  const float *dyr = dy + i * g.n, *xr = x + i * g.n;
  const double mu = mean[i], sd = stdev[i];
  double a = 0, b = 0;
  for (int64_t j = 0; j < g.n; ++j) {
    const double d = dyr[j] * (gamma ? gamma[j] : 1.f), xh = (xr[j] - mu) / sd;
    a += d;
    b += d * xh;
  }
  a /= g.n;
  b /= g.n;
  for (int64_t j = 0; j < g.n; ++j) {
    const double d = dyr[j] * (gamma ? gamma[j] : 1.f), xh = (xr[j] - mu) / sd;
    dx[i * g.n + j] = static_cast<float>((d - a - xh * b) / sd);
  }
}

// dgamma[j] = sum_i dY[i, j] * xhat[i, j], dbeta[j] = sum_i dY[i, j] for one column j.
HN_HOST_DEVICE inline void LayerNormAffineGradCol(int64_t j, LayerNormGeom g, const float* dy, const float* x,
                                                  const float* mean, const float* stdev, float* dgamma, float* dbeta) {
  double sg = 0, sb = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    const double d = dy[i * g.n + j];
    sg += d * (x[i * g.n + j] - mean[i]) / stdev[i];
    sb += d;
  }
  dgamma[j] = static_cast<float>(sg);
  dbeta[j] = static_cast<float>(sb);
}

// Device loops over the row/column functions above.
template <class Context>
void LayerNormForward(LayerNormGeom g, float eps, const float* x, const float* gamma, const float* beta, float* y,
                      float* mean, float* stdev, Context* ctx);
template <class Context>
void LayerNormBackward(LayerNormGeom g, const float* dy, const float* x, const float* mean, const float* stdev,
                       const float* gamma, float* dx, float* dgamma, float* dbeta, Context* ctx);

LayerNormGeom MakeLayerNormGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int axis);
std::vector<int64_t> LayerNormMomentsShape(const std::vector<int64_t>& x, int axis);  // axis canonical

template <class Context>
class LayerNormOp final : public Operator<Context> {
 public:
  LayerNormOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        axis_(this->template GetSingleArgument<int>("axis", 1)),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)),
        affine_(this->template GetSingleArgument<int>("elementwise_affine", 0) != 0) {}
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor& X = this->Input(0);
    EnforceFloatInput(def, X, 0);
    const int axis = CanonicalAxisFor(def, axis_, X.ndim(), 0);
    const LayerNormGeom g = MakeLayerNormGeom(def, X.shape(), axis);
    const float *gamma = nullptr, *beta = nullptr;
    if (affine_) {
      const std::vector<int64_t> want(X.shape().begin() + axis, X.shape().end());
      for (int k = 1; k <= 2; ++k) {
        const Tensor& P = this->Input(k);
        EnforceFloatInput(def, P, k);
        HN_ENFORCE(P.shape() == want, def.type(), ": input ", k, " ('", def.input(k), "') has shape ",
                   P.ShapeString(), " but X's dims from axis ", axis, " are ", ShapeToString(want));
      }
      gamma = this->Input(1).template data<float>();
      beta = this->Input(2).template data<float>();
    }
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    Tensor* mean = this->Output(1, LayerNormMomentsShape(X.shape(), axis), DataType::Float);
    Tensor* sd = this->Output(2, LayerNormMomentsShape(X.shape(), axis), DataType::Float);
    LayerNormForward<Context>(g, eps_, X.template data<float>(), gamma, beta, Y->template mutable_data<float>(),
                              mean->template mutable_data<float>(), sd->template mutable_data<float>(),
                              &this->context_);
  }

 private:
  int axis_;
  float eps_;
  bool affine_;
};

template <class Context>
class LayerNormGradientOp final : public Operator<Context> {
 public:
  LayerNormGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 1)) {}
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor &dY = this->Input(0), &mean = this->Input(2), &sd = this->Input(3), &X = this->Input(4);
    for (int k = 0; k < this->InputSize(); ++k) EnforceFloatInput(def, this->Input(k), k);
    EnforceSameShape(def, dY, 0, X, 4);
    const int axis = CanonicalAxisFor(def, axis_, X.ndim(), 4);
    const LayerNormGeom g = MakeLayerNormGeom(def, X.shape(), axis);
    HN_ENFORCE(mean.numel() == g.m && sd.numel() == g.m, def.type(), ": inputs 2 and 3 ('", def.input(2), "', '",
               def.input(3), "') must hold ", g.m, " values each");
    const bool affine = this->InputSize() == 6;
    HN_ENFORCE(affine == (this->OutputSize() == 3), def.type(), ": with gamma (input 5) give 3 outputs (dX, dgamma, "
               "dbeta), without it 1 (dX); got ", this->InputSize(), " inputs and ", this->OutputSize(), " outputs");
    HN_ENFORCE(!affine || this->Input(5).numel() == g.n, def.type(), ": input 5 ('", def.input(5), "') must hold ",
               g.n, " values");
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    float *dgamma = nullptr, *dbeta = nullptr;
    if (affine) {
      dgamma = this->Output(1, this->Input(5).shape(), DataType::Float)->template mutable_data<float>();
      dbeta = this->Output(2, this->Input(5).shape(), DataType::Float)->template mutable_data<float>();
    }
    LayerNormBackward<Context>(g, dY.template data<float>(), X.template data<float>(), mean.template data<float>(),
                               sd.template data<float>(), affine ? this->Input(5).template data<float>() : nullptr,
                               dX->template mutable_data<float>(), dgamma, dbeta, &this->context_);
  }

 private:
  int axis_;
};

}  // namespace hetnet
