// Allreduce, engine NCCL: [cw, X1..Xn] on the world's GPU, in place. The local tensors are summed
// into X1 (cuBLAS), X1 is all-reduced across the ranks, then copied back into X2..Xn: all of it
// enqueued on the op's stream, no host synchronization.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#include "operators/allreduce_op.h"
#include "operators/communicator_op_nccl.h"

namespace hetnet {

class AllreduceNcclOp final : public NcclCollectiveOp {
 public:
  using NcclCollectiveOp::NcclCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      NCCLCommonWorld& world = World();
      const int n = InputSize() - 1;
      const std::vector<void*> ptrs = InPlaceTensors(n, n);
      const Tensor& x = Input(1);
      const ncclDataType_t type = NcclTypeOrUnhandled(*this, x.dtype());
      if (x.numel() == 0) return;
      SumLocally(ptrs, x.numel(), x.dtype());
      cudaStream_t stream = context_.stream();
      world.Run("Allreduce", stream, [&](ncclComm_t comm) {
        NcclEnqueued(ncclAllReduce(ptrs[0], ptrs[0], static_cast<size_t>(x.numel()), type, ncclSum, comm, stream),
                     "ncclAllReduce");
      });
      CopyFirstToOthers(ptrs, 0, x.nbytes());
    });
  }
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(Allreduce, NCCL, AllreduceNcclOp);

}  // namespace hetnet
