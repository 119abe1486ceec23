// OnnxMaxUnpool(X, I[, output_shape]) -> Y: ONNX's MaxUnpool (opsets 9-22) as its reference computes it. X [N, C,
// D1..Dk] and I (int64, X's shape: MaxPool's flat indices over the whole pooled-from tensor); Y first takes the
// inferred shape [N, C, (Di - 1) * stride_i + kernel_i - pad_begin_i - pad_end_i], zeros except Y.flat[I[j]] =
// X.flat[j]; a given output_shape (int64 [k + 2], each dim >= the inferred one) then holds that block in its leading
// corner, zeros elsewhere. Args kernel_shape (required), strides, pads (begins then ends). Any numeric dtype
// (copied bytewise). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class OnnxMaxUnpoolOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
