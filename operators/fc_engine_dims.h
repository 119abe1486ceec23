// The (M, K, N) and output shape of FC (W is [N, K]) or FCTransposed (W is [K, N]) for the CPU
// engines that run both with one kernel (DNNL, PACKED); the checks and messages are the ops' own.
#pragma once

#include "operators/fc_op.h"
#include "operators/fc_transposed_op.h"

namespace hetnet {

template <bool kTransposed>
FCDims ComputeFCEngineDims(const caffe2::OperatorDef& def, const Tensor& X, const Tensor& W, const Tensor& b, int axis,
                           int axis_w) {
  if constexpr (kTransposed) {
    FCTDims t = ComputeFCTransposedDims(def, X.shape(), W.shape(), &b.shape());
    return FCDims{t.M, t.K, t.N, std::move(t.y_shape)};
  } else {
    return ComputeFCDims(def, X.shape(), W.shape(), &b.shape(), axis, axis_w);
  }
}

}  // namespace hetnet
