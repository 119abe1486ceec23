// SpatialBN, Caffe2's semantics:
//   inputs X, scale [C], bias [C], mean [C], var [C]; args is_test, epsilon (1e-5), momentum (0.9),
//   order "NCHW" (default; channel = dim 1) or "NHWC" (channel = last dim); X is 2-D or more.
//   is_test=1: Y = (X - mean) / sqrt(var + epsilon) * scale + bias (one output).
//   training: batch mean/variance (biased) per channel; outputs Y, running_mean, running_var (in
//   place with inputs 3, 4: running = momentum * running + (1 - momentum) * batch), saved_mean,
//   saved_inv_std = 1 / sqrt(batch_var + epsilon).
//   Multi-batch (Caffe2's combine_spatial_bn): inputs 5, 6 = sum and sumsq of X over every device's
//   batch (ChannelStats, summed), arg num_batches: mean = S / M, var = Q / M - mean^2 with
//   M = num_batches * N * HW. hetnet: an optional input 7 `count` (1 element, float/double/int64,
//   on the op's device) is M itself, for unequal per-device/per-rank batches.
// SpatialBNGradient(X, scale, dY, saved_mean, saved_inv_std) -> dX, dscale, dbias; with is_test=1
// inputs 3, 4 are the running mean and variance (Caffe2's GetSpatialBNGradient). Multi-batch: inputs
// 5, 6 = G, B (ChannelBackpropStats summed over devices; in place with outputs 1, 2), num_batches,
// optional count (input 7): dscale = G / num_batches, dbias = B / num_batches,
// dX = scale * rstd * (dY - (B + (X - mean) * rstd * G) / M).
// Kernels per device: CPU in spatial_bn_op.cc, CUDA in spatial_bn_op.cu; the CUDNN engine
// (spatial_bn_op_cudnn.cc) is tried first on CUDA and hands the forms cuDNN lacks to the CUDA kernels.
#pragma once

#include <cmath>

#include "core/operator.h"
#include "operators/channel_backprop_stats_op.h"
#include "operators/channel_stats_op.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// The element count M per channel: `value`, or (input 7) the one element at device pointer `ptr`,
// read inside the kernels so that a count on the GPU costs no host synchronisation.
struct BNCount {
  double value = 0;
  const void* ptr = nullptr;
  DataType dtype = DataType::Float;
};
HN_HOST_DEVICE inline double BNCountValue(const BNCount& n) {
  if (!n.ptr) return n.value;
  if (n.dtype == DataType::Double) return *static_cast<const double*>(n.ptr);
  if (n.dtype == DataType::Int64) return static_cast<double>(*static_cast<const int64_t*>(n.ptr));
  return *static_cast<const float*>(n.ptr);
}

// Per-channel statistics from sums (T float or double), in float64: mean = S / M,
// var = max(Q / M - mean^2, 0), rstd = 1 / sqrt(var + eps); running stats updated (Caffe2's
// momentum, biased var) when rm != nullptr. M == 0 (an empty batch) gives zero saved statistics
// and leaves the running ones alone, as Caffe2.
template <typename T>
HN_HOST_DEVICE inline void BNChannelStats(int64_t c, const T* sum, const T* sumsq, double M, double eps,
                                          double momentum, float* mean, float* rstd, float* rm, float* rv) {
  if (!(M > 0)) {
    mean[c] = 0.f;
    rstd[c] = 0.f;
    return;
  }
  const double m = static_cast<double>(sum[c]) / M;
  double v = static_cast<double>(sumsq[c]) / M - m * m;
  if (v < 0) v = 0;  // rounding only
  mean[c] = static_cast<float>(m);
  rstd[c] = static_cast<float>(1.0 / sqrt(v + eps));
  if (rm) {
    rm[c] = static_cast<float>(momentum * rm[c] + (1.0 - momentum) * m);
    rv[c] = static_cast<float>(momentum * rv[c] + (1.0 - momentum) * v);
  }
}

// dX = alpha * dY + beta * X + gamma per channel (coef holds alpha, beta, gamma as [3][C]) from the
// combined sums G, B and the count M; dscale = G / n_batches, dbias = B / n_batches, or 0 for an empty
// batch (M == 0, Caffe2's early return for N == 0). G, B may be the dscale, dbias buffers (in place):
// each channel reads them before writing. is_test: dX = alpha * dY.
HN_HOST_DEVICE inline void BNBackwardChannel(int64_t c, int64_t C, bool is_test, const float* G, const float* B,
                                             double M, double n_batches, const float* scale, const float* mean,
                                             const float* rstd, float* dscale, float* dbias, float* coef) {
  const double g = G[c], b = B[c], r = rstd[c];
  const double alpha = static_cast<double>(scale[c]) * r;
  double beta = 0, gamma = 0;
  if (!is_test && M > 0) {
    beta = -alpha * g * r / M;
    gamma = alpha * (static_cast<double>(mean[c]) * g * r - b) / M;
  }
  coef[c] = static_cast<float>(alpha);
  coef[C + c] = static_cast<float>(beta);
  coef[2 * C + c] = static_cast<float>(gamma);
  const bool empty = !(M > 0);
  dscale[c] = empty ? 0.f : static_cast<float>(g / n_batches);
  dbias[c] = empty ? 0.f : static_cast<float>(b / n_batches);
}

// Per-device kernels (spatial_bn_op.cc, spatial_bn_op.cu).
// Y = (X - mean) * rstd * scale + bias per channel.
template <class Context>
void BNApply(const ChannelLayout& d, const float* x, const float* mean, const float* rstd, const float* scale,
             const float* bias, float* y, Context* ctx);
// BNChannelStats for every channel; sums of dtype Float or Double.
template <class Context>
void BNStatsFromSums(int64_t C, const void* sum, const void* sumsq, DataType dtype, const BNCount& count, float eps,
                     float momentum, float* mean, float* rstd, float* rm, float* rv, Context* ctx);
// rstd = 1 / sqrt(var + eps) (is_test).
template <class Context>
void BNInvStd(int64_t C, const float* var, float eps, float* rstd, Context* ctx);
// running_mean = m * running_mean + (1 - m) * mean; running_var likewise with var = 1 / rstd^2 - eps
// (used by the CUDNN engine, whose own running variance is unbiased, unlike Caffe2's).
template <class Context>
void BNRunningUpdate(int64_t C, float momentum, float eps, const float* mean, const float* rstd, float* running_mean,
                     float* running_var, Context* ctx);
// BNBackwardChannel for every channel, then dX.
template <class Context>
void BNBackward(const ChannelLayout& d, bool is_test, const float* G, const float* B, const BNCount& count,
                double n_batches, const float* x, const float* scale, const float* dy, const float* mean,
                const float* rstd, float* coef, float* dscale, float* dbias, float* dx, Context* ctx);

// Checks and reads the multi-batch arguments shared by SpatialBN and SpatialBNGradient: inputs 5, 6
// (the combined sums; dtype Float, or Double where `allow_double`), num_batches and input 7.
struct BNMultiBatch {
  bool on = false;  // 7 or 8 inputs
  int num_batches = 1;
  BNCount count;
};
BNMultiBatch ReadBNMultiBatch(const OperatorBase& op, const ChannelLayout& d, bool allow_double);

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
    EnforceFloatInput(this->def(), X, 0);
    const ChannelLayout d = ChannelLayoutOf(this->def(), X.shape());
    for (int i = 1; i < 5; ++i) CheckPerChannel(this->def(), this->Input(i), i, d);
    const float* x = X.template data<float>();
    const float* scale = this->Input(1).template data<float>();
    const float* bias = this->Input(2).template data<float>();
    if (is_test_) {
      tmp_.Resize({d.C});
      float* rstd = tmp_.template mutable_data<float>();
      BNInvStd<Context>(d.C, this->Input(4).template data<float>(), eps_, rstd, &this->context_);
      Tensor* Y = this->Output(0, X.shape(), DataType::Float);
      BNApply<Context>(d, x, this->Input(3).template data<float>(), rstd, scale, bias, Y->template mutable_data<float>(),
                       &this->context_);
      return;
    }
    const BNMultiBatch mb = ReadBNMultiBatch(*this, d, true);
    const void *sum, *sumsq;
    DataType dtype = DataType::Double;
    BNCount count = mb.count;
    if (mb.on) {
      // In place (outputs 3, 4 = inputs 5, 6, as Caffe2 allows): each channel's sums are read before its
      // statistics are written, which needs one element size.
      HN_ENFORCE(this->Input(5).dtype() == DataType::Float ||
                     !(this->IsInputOutputAlias(5, 3) || this->IsInputOutputAlias(6, 4)),
                 "SpatialBN: in place, inputs 5 and 6 ('", this->def().input(5), "', '", this->def().input(6),
                 "') must be float32, got ", DataTypeName(this->Input(5).dtype()));
      sum = this->Input(5).raw_data();
      sumsq = this->Input(6).raw_data();
      dtype = this->Input(5).dtype();
    } else {  // this batch's own sums, in float64
      tmp_.Resize({2 * d.C});
      double* s = tmp_.template mutable_data<double>();
      ChannelSums<Context, double>(d, x, s, s + d.C, &this->context_);
      sum = s;
      sumsq = s + d.C;
      count.value = static_cast<double>(d.N * d.HW);
    }
    float* rm = RunningStat(1, 3, d.C);
    float* rv = RunningStat(2, 4, d.C);
    float* sm = this->Output(3, {d.C}, DataType::Float)->template mutable_data<float>();
    float* si = this->Output(4, {d.C}, DataType::Float)->template mutable_data<float>();
    BNStatsFromSums<Context>(d.C, sum, sumsq, dtype, count, eps_, momentum_, sm, si, rm, rv, &this->context_);
    Tensor* Y = this->Output(0, X.shape(), DataType::Float);
    BNApply<Context>(d, x, sm, si, scale, bias, Y->template mutable_data<float>(), &this->context_);
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
        eps_(this->template GetSingleArgument<float>("epsilon", 1e-5f)), rstd_(this->device()), coef_(this->device()) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const ChannelLayout d = CheckChannelBackpropInputs(this->def(), X, this->Input(2), 0, 2);
    for (int i : {1, 3, 4}) CheckPerChannel(this->def(), this->Input(i), i, d);
    const BNMultiBatch mb = ReadBNMultiBatch(*this, d, false);
    const float* x = X.template data<float>();
    const float* dy = this->Input(2).template data<float>();
    const float* mean = this->Input(3).template data<float>();
    const float* rstd = this->Input(4).template data<float>();
    if (is_test_) {  // inputs 3, 4 are the running mean and variance
      rstd_.Resize({d.C});
      float* r = rstd_.template mutable_data<float>();
      BNInvStd<Context>(d.C, rstd, eps_, r, &this->context_);
      rstd = r;
    }
    // Inputs 5, 6 (read before outputs 1, 2, which may be the same blobs).
    const float* G = mb.on ? this->Input(5).template data<float>() : nullptr;
    const float* B = mb.on ? this->Input(6).template data<float>() : nullptr;
    float* dscale = PerChannelOutput(1, 5, d.C, mb.on);
    float* dbias = PerChannelOutput(2, 6, d.C, mb.on);
    BNCount count = mb.count;
    if (!mb.on) {  // this batch's own sums, written straight into the outputs
      ChannelBackpropSums<Context>(d, x, mean, rstd, dy, dscale, dbias, &this->context_);
      G = dscale;
      B = dbias;
      count.value = static_cast<double>(d.N * d.HW);
    }
    coef_.Resize({3 * d.C});
    float* dx = this->Output(0, X.shape(), DataType::Float)->template mutable_data<float>();
    BNBackward<Context>(d, is_test_, G, B, count, mb.num_batches, x, this->Input(1).template data<float>(), dy, mean,
                        rstd, coef_.template mutable_data<float>(), dscale, dbias, dx, &this->context_);
  }

 private:
  float* PerChannelOutput(int out, int in, int64_t C, bool multi) {
    if (multi && this->IsInputOutputAlias(in, out)) return this->Output(out)->template mutable_data_existing<float>();
    return this->Output(out, {C}, DataType::Float)->template mutable_data<float>();
  }
  bool is_test_;
  float eps_;
  Tensor rstd_, coef_;
};

}  // namespace hetnet
