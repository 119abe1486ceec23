// NCCLAllGather: every GPU's tensor, stacked in input order, on every GPU: output i has shape
// [n, *input.shape] (N->N; an output may not share its input). One input: output [1, *shape].
// UNVERIFIED on a GPU: compiled without one; tests/cpp/test_nccl_ops.cc [gpu].
#pragma once

#include "operators/nccl_op_common.h"

namespace hetnet {

class NCCLAllGatherOp final : public NCCLOpBase {
 public:
  NCCLAllGatherOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;
};

}  // namespace hetnet
