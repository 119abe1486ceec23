// ChannelBackpropStats(X, mean, rstd, dY) -> dscale, dbias: per channel,
//   dscale[c] = sum dY * (X - mean[c]) * rstd[c],  dbias[c] = sum dY
// over every other dimension (Caffe2's op; data_parallel_model's combine_spatial_bn and hetnet's
// sync BN sum these over devices/processes and hand them to the 7-input SpatialBNGradient).
// arg order "NCHW" (default) or "NHWC"; float32 in and out, float64 accumulation.
#pragma once

#include "operators/channel_stats_op.h"

namespace hetnet {

template <class Context>
void ChannelBackpropSums(const ChannelLayout& d, const float* x, const float* mean, const float* rstd, const float* dy,
                         float* dscale, float* dbias, Context* ctx);

// Checks X, mean, rstd, dY (inputs 0..3 of ChannelBackpropStats; the same roles at `x, mean, rstd,
// dy` of SpatialBNGradient) and returns X's layout.
inline ChannelLayout CheckChannelBackpropInputs(const caffe2::OperatorDef& def, const Tensor& X, const Tensor& dY,
                                                int x_in, int dy_in) {
  EnforceFloatInput(def, X, x_in);
  EnforceFloatInput(def, dY, dy_in);
  EnforceSameShape(def, dY, dy_in, X, x_in);
  return ChannelLayoutOf(def, X.shape(), x_in);
}
inline void CheckPerChannel(const caffe2::OperatorDef& def, const Tensor& t, int i, const ChannelLayout& d) {
  EnforceFloatInput(def, t, i);
  HN_ENFORCE(t.shape() == std::vector<int64_t>{d.C}, def.type(), ": input ", i, " ('", def.input(i), "') has shape ",
             t.ShapeString(), " but [", d.C, "] (the channels of '", def.input(0), "') is required");
}

template <class Context>
class ChannelBackpropStatsOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const ChannelLayout d = CheckChannelBackpropInputs(this->def(), X, this->Input(3), 0, 3);
    for (int i = 1; i < 3; ++i) CheckPerChannel(this->def(), this->Input(i), i, d);
    ChannelBackpropSums<Context>(d, X.template data<float>(), this->Input(1).template data<float>(),
                                 this->Input(2).template data<float>(), this->Input(3).template data<float>(),
                                 this->Output(0, {d.C}, DataType::Float)->template mutable_data<float>(),
                                 this->Output(1, {d.C}, DataType::Float)->template mutable_data<float>(),
                                 &this->context_);
  }
};

}  // namespace hetnet
