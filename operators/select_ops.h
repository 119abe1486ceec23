// Selection ops as ONNX defines them (CPU only, no gradients; any dtype but string moves as bytes):
//   NonZero(X) -> Y: int64 [rank, count], the coordinates of X's nonzero (true) elements, row-major
//     order. X numeric or bool.
//   Compress(X, condition) -> Y: the slices of X along arg `axis` where condition (1-D, bool or
//     numeric: nonzero is true) holds; without `axis`, the elements of flattened X. A condition
//     shorter than the axis drops the rest; a longer one is refused.
//   ReverseSequence(X, sequence_lens) -> Y: for each batch entry b (along arg batch_axis, default 1),
//     the first sequence_lens[b] steps along arg time_axis (default 0) reversed, the rest copied; the
//     two axes are 0 and 1; lengths (int32 / int64, one per batch entry) in [0, steps].
#pragma once

#include "core/operator.h"

namespace hetnet {

class NonZeroOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class CompressOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class ReverseSequenceOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
