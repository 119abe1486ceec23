// MSRAFill, Caffe2's (He et al. 2015, "fan_out" mode): normal floats with mean 0 and
// std = sqrt(2 / fan_out), fan_out = numel / dims[1] (numel for a shape of fewer than 2 dims, where
// Caffe2 would fail). Shape arguments and inputs as the other fills (operators/filler_ops.h); the
// op's own mt19937 is seeded from device_option.random_seed (random when unset), as theirs.
#pragma once

#include <cmath>
#include <random>

#include "operators/filler_ops.h"

namespace hetnet {

inline float MSRAFillStd(const std::vector<int64_t>& shape, int64_t numel) {
  const int64_t fan_out = shape.size() >= 2 && shape[1] > 0 ? numel / shape[1] : numel;
  return std::sqrt(2.f / static_cast<float>(fan_out > 0 ? fan_out : 1));
}

template <class Context>
class MSRAFillOp final : public FillerOp<Context> {
 public:
  MSRAFillOp(const caffe2::OperatorDef& def, Workspace* ws)
      : FillerOp<Context>(def, ws),
        gen_(def.device_option().has_random_seed() ? def.device_option().random_seed() : std::random_device{}()) {}
  void Fill(Tensor* Y) override {
    const int64_t n = Y->numel();
    if (n == 0) return;
    math::RandGaussian<Context>(n, 0.f, MSRAFillStd(Y->shape(), n), Y->template mutable_data<float>(), gen_,
                                &this->context_);
  }

 private:
  std::mt19937 gen_;
};

}  // namespace hetnet
