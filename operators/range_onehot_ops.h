// Tensors generated from a few values, as ONNX defines them (CPU only, no gradients):
//   Range(start, limit, delta) -> Y: start + i * delta for i in [0, max(0, ceil((limit - start) / delta)));
//     three one-element inputs of one dtype (float16/32/64, int16/32/64); delta 0 or non-finite values
//     are refused, as is a count past the element cap.
//   OneHot(indices, depth, values) -> Y: Y has indices' shape with a new dim of `depth` at arg `axis`
//     (default -1, in [-rank-1, rank]); values = [off, on] (any dtype but string; Y has it). Indices
//     (any numeric dtype, truncated to integers) in [-depth, depth) mark `on` (negative ones count
//     from the end); others leave their row all `off`. depth (one value) must be >= 1.
//   EyeLike(X) -> Y: a 2-D tensor of X's shape with ones on diagonal arg `k` (default 0; > 0 above the
//     main one) and zeros elsewhere; arg dtype (hetnet / Caffe2 TensorProto value) or X's dtype.
#pragma once

#include "core/operator.h"

namespace hetnet {

class RangeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class OneHotOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class EyeLikeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
