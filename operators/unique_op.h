// Unique(X) -> Y[, indices[, inverse_indices[, counts]]]: ONNX's Unique. Without arg axis, the distinct
// elements of flattened X; with it, the distinct slices along axis (negative from the end). Arg
// sorted (default 1): ascending (slices compared lexicographically in row-major order, as numpy);
// 0: in order of first occurrence. indices: each unique's first position; inverse_indices: each
// position's unique; counts: occurrences (all int64). X float32/64, int8/16/32/64, uint8/16. CPU only.
#pragma once

#include "core/operator.h"

namespace hetnet {

class UniqueOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
