// NCCLAllGather: every GPU's tensor, stacked in input order, on every GPU: output i has shape
// [n, *input.shape] (N->N; an output may not share its input). One input: output [1, *shape].
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include "operators/nccl_op_common.h"

namespace hetnet {

class NCCLAllGatherOp final : public NCCLOpBase {
 public:
  NCCLAllGatherOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;
};

}  // namespace hetnet
