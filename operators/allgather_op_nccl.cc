// Allgather, engine NCCL: [cw, X1..Xn] on the world's GPU -> Y, 1-D, rank-major then input index.
// The local tensors are copied into this rank's slot of Y, then gathered in place (NCCL's in-place
// form: the send buffer is the rank's slot of the receive buffer); enqueued on the op's stream.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#include "operators/allgather_op.h"
#include "operators/communicator_op_nccl.h"

namespace hetnet {

class AllgatherNcclOp final : public NcclCollectiveOp {
 public:
  using NcclCollectiveOp::NcclCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      NCCLCommonWorld& world = World();
      const int n = InputSize() - 1;
      HN_ENFORCE(n >= 1, type(), " takes [comm_world, X1..Xn] with n >= 1, got ", InputSize(), " input(s)");
      const Tensor& x = Input(1);
      const DataType t = x.dtype();
      if (t != DataType::Float && t != DataType::Float16 && t != DataType::Int32 && t != DataType::Int64)
        ThrowUnhandledType(*this, t);
      for (int i = 2; i <= n; ++i) {
        const Tensor& xi = Input(i);
        HN_ENFORCE(xi.numel() == x.numel() && xi.dtype() == t, type(), ": every tensor must match '", def().input(1),
                   "' (", x.DebugString(), "), but '", def().input(i), "' is ", xi.DebugString());
      }
      const int64_t per_rank = static_cast<int64_t>(n) * x.numel();
      Tensor* y = Output(0, {per_rank * world.size()}, t);
      for (int i = 1; i <= n; ++i)
        HN_ENFORCE(Input(i).nbytes() == 0 || Input(i).raw_data() != y->raw_data(), type(), ": output '",
                   def().output(0), "' may not share memory with input '", def().input(i), "'");
      if (per_rank == 0) return;
      auto* base = static_cast<char*>(y->raw_mutable_data(t));
      char* mine = base + static_cast<size_t>(world.rank()) * per_rank * x.itemsize();
      cudaStream_t stream = context_.stream();
      for (int i = 1; i <= n; ++i)
        HN_CUDA_CHECK(cudaMemcpyAsync(mine + (i - 1) * x.nbytes(), Input(i).raw_data(), x.nbytes(),
                                      cudaMemcpyDeviceToDevice, stream));
      const ncclDataType_t type = NcclTypeOrUnhandled(*this, t);
      world.Run("Allgather", stream, [&](ncclComm_t comm) {
        NcclEnqueued(ncclAllGather(mine, base, static_cast<size_t>(per_rank), type, comm, stream), "ncclAllGather");
      });
    });
  }
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(Allgather, NCCL, AllgatherNcclOp);

}  // namespace hetnet
