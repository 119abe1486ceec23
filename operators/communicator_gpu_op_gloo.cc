// Engine GLOO with GPU tensors (CUDA-device communicator ops): refused with a clear error at net
// creation. Debian's Gloo has no CUDA algorithms, and staging through pinned host memory inside
// the op would need the producer streams' events, which a CPU-context kernel does not see; so no
// staging here (untestable without a GPU). Place the op on CPU (the runtime inserts the copies)
// or use engine NCCL.
#include "operators/communicator_op.h"

namespace hetnet {

class GlooOnGpuUnsupportedOp final : public Operator<CPUContext> {
 public:
  GlooOnGpuUnsupportedOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
    HN_THROW(kUnsupported, def.type(), " with engine GLOO on ", device().str(),
             ": GLOO runs on CPU tensors only (Debian's Gloo has no CUDA); place the op on CPU, where the ",
             "runtime copies GPU tensors to it, or use engine NCCL");
  }
  void RunOnDevice() override {}
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(CreateCommonWorld, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(CloneCommonWorld, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Allreduce, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Broadcast, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Reduce, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Allgather, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ReduceScatter, GLOO, GlooOnGpuUnsupportedOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Barrier, GLOO, GlooOnGpuUnsupportedOp);

}  // namespace hetnet
