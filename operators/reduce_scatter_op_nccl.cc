// ReduceScatter, engine NCCL: [cw, X1..Xn, recvCounts] in place on the world's GPU. X1..Xn are
// summed into X1 (cuBLAS); with equal counts one in-place ncclReduceScatter, with uneven ones a
// group of ncclReduce, one per rank's segment; this rank's segment is then copied into X2..Xn.
// recvCounts is read on the host: from a CPU tensor directly, from a GPU one by a blocking copy.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#include "operators/communicator_op_nccl.h"
#include "operators/reduce_scatter_op.h"

namespace hetnet {

class ReduceScatterNcclOp final : public NcclCollectiveOp {
 public:
  using NcclCollectiveOp::NcclCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      NCCLCommonWorld& world = World();
      const int n = InputSize() - 2;
      HN_ENFORCE(n >= 1, type(), " takes [comm_world, X1..Xn, recvCounts], got ", InputSize(), " input(s)");
      HN_ENFORCE(OutputSize() == n + 1 && IsInputOutputAlias(n + 1, n), type(),
                 " runs in place: the last output must be recvCounts ('", def().input(n + 1), "')");
      const std::vector<void*> ptrs = InPlaceTensors(n, n + 1);
      const Tensor& x = Input(1);
      const ncclDataType_t type = NcclTypeOrUnhandled(*this, x.dtype());
      ReadCounts(world.size(), x.numel());
      if (x.numel() == 0) return;
      SumLocally(ptrs, x.numel(), x.dtype());
      const int p = world.size(), r = world.rank();
      const size_t item = x.itemsize();
      char* base = static_cast<char*>(ptrs[0]);
      bool even = true;
      for (int i = 0; i < p; ++i) even = even && offsets_[i + 1] - offsets_[i] == offsets_[1];
      cudaStream_t stream = context_.stream();
      world.Run("ReduceScatter", stream, [&](ncclComm_t comm) {
        if (even) {
          const size_t c = static_cast<size_t>(offsets_[1]);
          NcclEnqueued(ncclReduceScatter(base, base + r * c * item, c, type, ncclSum, comm, stream), "ncclReduceScatter");
          return;
        }
        for (int i = 0; i < p; ++i) {
          char* seg = base + offsets_[i] * item;
          NcclEnqueued(ncclReduce(seg, seg, static_cast<size_t>(offsets_[i + 1] - offsets_[i]), type, ncclSum, i, comm,
                                  stream),
                       "ncclReduce");
        }
      });
      CopyFirstToOthers(ptrs, offsets_[r] * item, (offsets_[r + 1] - offsets_[r]) * item);
    });
  }

 private:
  void ReadCounts(int size, int64_t numel) {
    const Blob* b = InputBlob(InputSize() - 1);
    const std::string& name = def().input(InputSize() - 1);
    HN_ENFORCE(b->IsTensor() && b->GetTensor().initialized(), type(), ": recvCounts ('", name, "') has no data");
    const Tensor& counts = b->GetTensor();
    HN_ENFORCE(counts.dtype() == DataType::Int32 && counts.numel() == size, type(), ": recvCounts ('", name,
               "') must be int32 with one count per rank (", size, "), got ", counts.DebugString());
    host_.resize(size);
    if (counts.device().is_cpu()) {
      std::copy(counts.data<int32_t>(), counts.data<int32_t>() + size, host_.begin());
    } else {
      HN_CUDA_CHECK(cudaMemcpyAsync(host_.data(), counts.raw_data(), size * sizeof(int32_t), cudaMemcpyDefault,
                                    context_.stream()));
      HN_CUDA_CHECK(cudaStreamSynchronize(context_.stream()));
    }
    offsets_.resize(size + 1);
    offsets_[0] = 0;
    for (int i = 0; i < size; ++i) {
      HN_ENFORCE(host_[i] >= 0, type(), ": recvCounts[", i, "] is negative (", host_[i], ")");
      offsets_[i + 1] = offsets_[i] + host_[i];
    }
    HN_ENFORCE(offsets_[size] == numel, type(), ": recvCounts sum to ", offsets_[size], " but the tensors have ",
               numel, " elements");
  }

  std::vector<int32_t> host_;
  std::vector<int64_t> offsets_;
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(ReduceScatter, NCCL, ReduceScatterNcclOp);

}  // namespace hetnet
