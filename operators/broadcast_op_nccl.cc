// Broadcast, engine NCCL: X1 of rank `root` into X1..Xn of every rank, in place on the world's GPU;
// enqueued on the op's stream.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#include "operators/broadcast_op.h"
#include "operators/communicator_op_nccl.h"

namespace hetnet {

class BroadcastNcclOp final : public NcclCollectiveOp {
 public:
  using NcclCollectiveOp::NcclCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      NCCLCommonWorld& world = World();
      const int root = BroadcastRootArgument(*this, world.size());
      const int n = InputSize() - 1;
      const std::vector<void*> ptrs = InPlaceTensors(n, n);
      const Tensor& x = Input(1);
      const DataType t = x.dtype();
      // Caffe2's Broadcast dtypes (float64 would travel fine, but GLOO refuses it: one contract).
      if (t != DataType::Float && t != DataType::Float16 && t != DataType::Int32 && t != DataType::Int64)
        ThrowUnhandledType(*this, t);
      const ncclDataType_t type = NcclTypeOrUnhandled(*this, t);
      if (x.numel() == 0) return;
      cudaStream_t stream = context_.stream();
      world.Run("Broadcast", stream, [&](ncclComm_t comm) {
        NcclEnqueued(ncclBroadcast(ptrs[0], ptrs[0], static_cast<size_t>(x.numel()), type, root, comm, stream),
                     "ncclBroadcast");
      });
      CopyFirstToOthers(ptrs, 0, x.nbytes());
    });
  }
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(Broadcast, NCCL, BroadcastNcclOp);

}  // namespace hetnet
