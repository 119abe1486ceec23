// GatherElements(X, indices) -> Y (ONNX): Y has indices' shape, Y[i0..ik] = X[i0.., indices[i0..ik], ..ik]
// with the index replacing the coordinate of arg `axis` (default 0; negative counts from the end).
// indices: int32/int64 of X's rank, each dim other than axis at most X's; an index may be negative
// (counts from the end of that dim); one outside [-X.dim(axis), X.dim(axis)) is an error naming it.
// Any fixed-size dtype. CPU kernel (other devices fall back to it); no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class GatherElementsOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
