// NCCLAllreduce: the elementwise sum over one tensor per GPU, written to every GPU (N->N, in place
// allowed). One input: the output is the input (Caffe2 left a distinct output unwritten).
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include "operators/nccl_op_common.h"

namespace hetnet {

class NCCLAllreduceOp final : public NCCLOpBase {
 public:
  NCCLAllreduceOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;
};

}  // namespace hetnet
