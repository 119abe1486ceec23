// ONNX's shape ops whose parameters arrive as run-time tensors (CPU only, no gradients; any dtype but
// string moves as bytes). Index inputs are 1-D int32 / int64 tensors.
//   OnnxSlice(X, starts, ends[, axes[, steps]]) -> Y: ONNX Slice (opset 13): per listed axis (default
//     0..n-1, negative from the end, no repeats) the elements start, start + step, ... short of end;
//     negative starts / ends count from the end, then are clamped to the dim ([0, dim] for a positive
//     step, [-1, dim - 1] for a negative one); steps default 1 and must not be 0.
//   OnnxSqueeze(X[, axes]) -> Y: X without the listed size-1 dims (negative from the end); without
//     axes (or with none listed), without every size-1 dim. A listed dim that is not 1 is refused.
//   OnnxUnsqueeze(X, axes) -> Y: X with size-1 dims inserted at the listed positions of the output
//     (its rank is X's plus the number of axes; negative from its end; no repeats).
#pragma once

#include "core/operator.h"

namespace hetnet {

class OnnxSliceOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class OnnxSqueezeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class OnnxUnsqueezeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
