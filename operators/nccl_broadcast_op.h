// NCCLBroadcast: input `root` (an index into the inputs) copied to every GPU, in place (output i
// must be input i). The other inputs need only be GPU tensors of the root's dtype: they are resized
// to the root's shape. One input: nothing to do.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include "operators/nccl_op_common.h"

namespace hetnet {

class NCCLBroadcastOp final : public NCCLOpBase {
 public:
  NCCLBroadcastOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;
};

}  // namespace hetnet
