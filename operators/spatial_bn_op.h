// SpatialBN (NCHW), Caffe2's semantics:
//   inputs X, scale [C], bias [C], mean [C], var [C]; args is_test, epsilon (1e-5), momentum (0.9).
//   is_test=1: Y = (X - mean) / sqrt(var + epsilon) * scale + bias (one output).
//   training: batch mean/variance (biased) over N, H, W; outputs Y, running_mean, running_var (in
//   place with inputs 3, 4: running = momentum * running + (1 - momentum) * batch), saved_mean,
//   saved_inv_std = 1 / sqrt(batch_var + epsilon).
// SpatialBNGradient(X, scale, dY, saved_mean, saved_inv_std) -> dX, dscale, dbias; with is_test=1
// inputs 3, 4 are the running mean and variance (Caffe2's GetSpatialBNGradient).
// Kernels per device: CPU in spatial_bn_op.cc, CUDA in spatial_bn_op.cu; the CUDNN engine
// (spatial_bn_op_cudnn.cc) is tried first on CUDA.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

struct BNDims {
  int64_t N, C, HW;
};

inline BNDims CheckSpatialBNInputs(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                   const std::vector<std::vector<int64_t>>& per_channel) {
  HN_ENFORCE(x.size() >= 2, def.type(), ": input 0 ('", def.input(0), "') has shape ", ShapeToString(x),
             " but NCHW (at least 2-D) is required");
  BNDims d{x[0], x[1], 1};
  for (size_t i = 2; i < x.size(); ++i) d.HW *= x[i];
  for (size_t i = 0; i < per_channel.size(); ++i)
    HN_ENFORCE(per_channel[i] == std::vector<int64_t>{d.C}, def.type(), ": input ", i + 1, " ('", def.input(i + 1),
               "') has shape ", ShapeToString(per_channel[i]), " but [", d.C, "] (channels of '", def.input(0), "' ",
               ShapeToString(x), ") is required");
  return d;
}

// Y = (X - mean) * inv_std * scale + bias per channel.
template <class Context>
void BNApply(const BNDims& d, const float* x, const float* mean, const float* inv_std, const float* scale,
             const float* bias, float* y, Context* ctx);
// Batch mean and inv_std; running stats updated with momentum.
template <class Context>
void BNMoments(const BNDims& d, const float* x, float eps, float momentum, float* mean, float* inv_std,
               float* running_mean, float* running_var, Context* ctx);
// running_mean = m * running_mean + (1 - m) * mean; running_var likewise with var = 1 / inv_std^2 - eps
// (used by the CUDNN engine, whose own running variance is unbiased, unlike Caffe2's CPU kernel).
template <class Context>
void BNRunningUpdate(int64_t C, float momentum, float eps, const float* mean, const float* inv_std, float* running_mean,
                     float* running_var, Context* ctx);
template <class Context>
void BNBackward(const BNDims& d, bool is_test, const float* x, const float* scale, const float* dy, const float* mean,
                const float* inv_std, float* dx, float* dscale, float* dbias, Context* ctx);

template <class Context>
class SpatialBNOp final : public Operator<Context> {
 public:
  SpatialBNOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), is_test_(this->template GetSingleArgument<int>("is_test", 0) != 0),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)),
        momentum_(this->template GetSingleArgument<float>("momentum", 0.9f)), tmp_(this->device()) {
    HN_ENFORCE(is_test_ || this->OutputSize() == 5, "SpatialBN: training (is_test=0) has 5 outputs (Y, running_mean, "
               "running_var, saved_mean, saved_inv_std), got ", this->OutputSize());
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    for (int i = 0; i < 5; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const BNDims d = CheckSpatialBNInputs(this->def(), X.shape(), {this->Input(1).shape(), this->Input(2).shape(),
                                                                  this->Input(3).shape(), this->Input(4).shape()});
    const float* scale = this->Input(1).template data<float>();
    const float* bias = this->Input(2).template data<float>();
    if (is_test_) {
      // inv_std from the running variance.
      tmp_.Resize({d.C});
      float* inv = tmp_.template mutable_data<float>();
      BNMoments<Context>(BNDims{0, d.C, 0}, this->Input(4).template data<float>(), eps_, 0.f, nullptr, inv, nullptr,
                         nullptr, &this->context_);
      Tensor* Y = this->Output(0, X.shape(), DataType::Float);
      BNApply<Context>(d, X.template data<float>(), this->Input(3).template data<float>(), inv, scale, bias,
                       Y->template mutable_data<float>(), &this->context_);
      return;
    }
    float* rm = RunningStat(1, 3, d.C);
    float* rv = RunningStat(2, 4, d.C);
    float* sm = this->Output(3, {d.C}, DataType::Float)->template mutable_data<float>();
    float* si = this->Output(4, {d.C}, DataType::Float)->template mutable_data<float>();
    BNMoments<Context>(d, X.template data<float>(), eps_, momentum_, sm, si, rm, rv, &this->context_);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    BNApply<Context>(d, X.template data<float>(), sm, si, scale, bias, Y->template mutable_data<float>(),
                     &this->context_);
  }

 private:
  // Output `out` holding the running statistic of input `in` (in place when they are one blob).
  float* RunningStat(int out, int in, int64_t C) {
    if (this->IsInputOutputAlias(in, out)) return this->Output(out)->template mutable_data_existing<float>();
    Tensor* t = this->Output(out, {C}, DataType::Float);
    t->CopyFrom(this->Input(in), &this->context_);
    return t->template mutable_data<float>();
  }
  bool is_test_;
  float eps_, momentum_;
  Tensor tmp_;
};

template <class Context>
class SpatialBNGradientOp final : public Operator<Context> {
 public:
  SpatialBNGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), is_test_(this->template GetSingleArgument<int>("is_test", 0) != 0),
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)), tmp_(this->device()) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    for (int i = 0; i < 5; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    HN_ENFORCE(this->Input(2).shape() == X.shape(), "SpatialBNGradient: dY ('", this->def().input(2), "') ",
               this->Input(2).ShapeString(), " differs from X ", X.ShapeString());
    const BNDims d = CheckSpatialBNInputs(this->def(), X.shape(), {this->Input(1).shape()});
    const float* inv = this->Input(4).template data<float>();
    if (is_test_) {
      tmp_.Resize({d.C});
      float* t = tmp_.template mutable_data<float>();
      BNMoments<Context>(BNDims{0, d.C, 0}, inv, eps_, 0.f, nullptr, t, nullptr, nullptr, &this->context_);
      inv = t;
    }
    BNBackward<Context>(d, is_test_, X.template data<float>(), this->Input(1).template data<float>(),
                        this->Input(2).template data<float>(), this->Input(3).template data<float>(), inv,
                        this->Output(0, X.shape(), DataType::Float)->template mutable_data<float>(),
                        this->Output(1, {d.C}, DataType::Float)->template mutable_data<float>(),
                        this->Output(2, {d.C}, DataType::Float)->template mutable_data<float>(), &this->context_);
  }

 private:
  bool is_test_;
  float eps_;
  Tensor tmp_;
};

}  // namespace hetnet
