// ONNX's CumSum(X, axis) -> Y: running sums of X along `axis` (input 1, a one-element int32 / int64
// tensor in [-rank, rank)); arg exclusive (default 0): each sum leaves out its own element; arg
// reverse (default 0): sums run from the end. X float32/64, int8/16/32/64 or uint8/16; Y like X
// (integer sums wrap). CumProd(X, axis) likewise with running products (exclusive ones start at 1).
// CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class CumSumOp final : public Operator<CPUContext> {
 public:
  CumSumOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool exclusive_, reverse_, product_;  // product_: CumProd
};

}  // namespace hetnet
