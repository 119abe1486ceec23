// NCHWToBlocked / BlockedToNCHW: a 4-D NCHW tensor <-> the same shape in oneDNN's blocked layout
// nChw8c / nChw16c ([N, C/b, H, W, b] in memory), argument channel_block b (8 or 16), C a multiple of
// b. The inference rewrite's blocked activations (core/blocked_activations_pass.h) enter and leave
// a region of DNNL convolutions through them. Each op's gradient is the other one.
#pragma once

#include <cstdint>

#include "core/operator.h"
#include "device/math.h"
#include "operators/cnn_op_utils.h"
#include "operators/order_switch_ops.h"

namespace hetnet {

// The block the op's channel_block names, checked against X's shape (messages name op and blob).
inline int CheckedChannelBlock(const caffe2::OperatorDef& def, const std::vector<int64_t>& x) {
  const int b = ArgumentHelper(def).GetSingleArgument<int>("channel_block", 0);
  HN_CHECK_KIND(kUnsupported, b == 8 || b == 16, def.type(), ": channel_block ", b, " is not 8 or 16");
  HN_ENFORCE(x.size() == 4, def.type(), ": input 0 ('", def.input(0), "') has shape ", ShapeToString(x),
             " but a 4-D NCHW tensor is required");
  HN_ENFORCE(x[1] % b == 0, def.type(), ": input 0 ('", def.input(0), "') ", ShapeToString(x), " has ", x[1],
             " channels, not a whole number of blocks of ", b);
  return b;
}

template <bool kToBlocked>
class BlockedLayoutOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    const Tensor& X = Input(0);
    const int64_t b = CheckedChannelBlock(def(), X.shape());
    const size_t item = PlainItemSize(def(), X, 0);
    HN_CHECK_KIND(kUnsupported, item == 2 || item == 4 || item == 8, def().type(), ": input 0 ('", def().input(0),
                  "') is ", DataTypeName(X.dtype()), "; 2-, 4- and 8-byte elements only");
    Tensor* Y = Output(0, X.shape(), X.dtype());
    const int64_t s = X.dim(2) * X.dim(3), blocks = X.dim(0) * (X.dim(1) / b);
    const char* x = static_cast<const char*>(X.raw_data());
    char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
    // Block k (image n, channels [cb b, cb b + b)) is at the same offset k b s in both layouts: a
    // [b, s] matrix in NCHW, its transpose [s, b] when blocked.
    const int workers = X.nbytes() < (size_t{1} << 18) ? 1 : math::CpuWorkers();
    math::ParallelFor(blocks, workers, [&](int64_t k, int) {
      const size_t at = static_cast<size_t>(k * b * s) * item;
      TransposeTilesOfItems(kToBlocked ? b : s, kToBlocked ? s : b, item, x + at, y + at);
    });
  }
};

}  // namespace hetnet
