// NCCLReduce: the elementwise sum over one tensor per GPU, written only to GPU `root` (an index
// into the inputs): N inputs, 1 output, which may share input `root`'s blob. One input: the output
// is the input.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include "operators/nccl_op_common.h"

namespace hetnet {

class NCCLReduceOp final : public NCCLOpBase {
 public:
  NCCLReduceOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;
};

}  // namespace hetnet
