// DestroyCommonWorld: [common_world] -> [common_world], in place (Caffe2's communicator_op.cc):
// closes the world's connections; later collectives on it fail with kIo. An empty blob is a no-op.
// The kernel is engine-neutral (CommonWorld::Close) and registered for GLOO here; NCCL may reuse
// DestroyCommonWorldOp.
#pragma once

#include "operators/communicator_op.h"

namespace hetnet {

class DestroyCommonWorldOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    if (InputBlob(0)->empty()) return;
    CommonWorldInput(*this)->Close();
  }
};

}  // namespace hetnet
