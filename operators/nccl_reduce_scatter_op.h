// NCCLReduceScatter: each GPU's input has shape [n, ...]; the inputs are summed and GPU i gets
// slice i of the sum, shape input.shape[1:] (N->N; an output may not share its input). Unlike the
// other NCCL ops, one input still runs NCCL (a one-GPU communicator), as in Caffe2.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include "operators/nccl_op_common.h"

namespace hetnet {

class NCCLReduceScatterOp final : public NCCLOpBase {
 public:
  NCCLReduceScatterOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;
};

}  // namespace hetnet
