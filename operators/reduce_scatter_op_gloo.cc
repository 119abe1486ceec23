// ReduceScatter, engine GLOO: a ring over Gloo unbound buffers with uneven segments (Gloo's own
// ReduceScatterHalvingDoubling binds pointers at construction and draws a context slot per
// instance, so rebinding it after a pointer change on one rank only would desynchronize the ranks).
// In p - 1 steps rank r sends segment r-s-1 to r+1 and adds segment r-s-2 from r-1 into its own;
// after the last step segment r holds all p contributions.
// As Gloo's algorithm did for Caffe2, rank r's segment (recvCounts[r] elements starting at the sum of
// the counts before r) ends at the front of every output; the rest of each output is unspecified.
// The counts may sum to fewer elements than the tensors hold (the tail goes to no rank), not more.
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <memory>

#include "operators/communicator_op_gloo.h"
#include "operators/reduce_scatter_op.h"

namespace hetnet {

namespace {
constexpr uint8_t kReduceScatterSlotPrefix = 0x40;  // beside Gloo's own 0x01..0x08
}

class ReduceScatterGlooOp final : public GlooCollectiveOp {
 public:
  using GlooCollectiveOp::GlooCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      GlooCommonWorld& world = World();
      const int n = InputSize() - 2;
      HN_ENFORCE(n >= 1, type(), " takes [comm_world, X1..Xn, recvCounts], got ", InputSize(), " input(s)");
      CheckInPlaceTensors(*this, 1, n, n + 1);
      HN_ENFORCE(IsInputOutputAlias(n + 1, n), type(), " runs in place: the last output must be recvCounts ('",
                 def().input(n + 1), "')");
      const Tensor& x = Input(1);
      const GlooReduceFn sum = GlooSumFor(x.dtype());
      if (!sum) ThrowUnhandledType(*this, x.dtype());
      ReadCounts(Input(n + 1), world.size(), x.numel());
      CollectOutputPointers(n, x.dtype());
      RecordLocal(x.nbytes() * n, "local sum");
      if (x.numel() == 0) return;
      SumLocally(sum, x.numel());
      if (world.size() > 1)
        RunCollective(world, "ReduceScatter", "ring over unbound buffers", x.nbytes() * n, x.numel(), x.dtype(),
                      CountsKey(), [&] { Ring(world, x, sum); });
      const size_t item = x.itemsize();
      const size_t off = offsets_[world.rank()] * item, len = (offsets_[world.rank() + 1] - offsets_[world.rank()]) * item;
      auto* reduced = static_cast<uint8_t*>(want_.ptrs[0]);
      for (int i = 1; i < n; ++i) std::memcpy(want_.ptrs[i], reduced + off, len);
      if (off && len) std::memmove(reduced, reduced + off, len);  // last: the copies above read it
    });
  }

 private:
  void ReadCounts(const Tensor& counts, int size, int64_t numel) {
    HN_ENFORCE(counts.dtype() == DataType::Int32 && counts.numel() == size, type(), ": recvCounts ('",
               def().input(InputSize() - 1), "') must be int32 with one count per rank (", size, "), got ",
               counts.DebugString());
    const int32_t* c = counts.data<int32_t>();
    offsets_.resize(size + 1);  // allocates only when the world size changes
    offsets_[0] = 0;
    for (int i = 0; i < size; ++i) {
      HN_ENFORCE(c[i] >= 0, type(), ": recvCounts[", i, "] is negative (", c[i], ")");
      offsets_[i + 1] = offsets_[i] + c[i];
    }
    HN_ENFORCE(offsets_[size] <= numel, type(), ": recvCounts sum to ", offsets_[size], " but the tensors have only ",
               numel, " elements");
  }

  // recvCounts must agree across ranks too: a hash of the offsets.
  int64_t CountsKey() const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t o : offsets_) h = (h ^ static_cast<uint64_t>(o)) * 1099511628211ull;
    return static_cast<int64_t>(h & 0x7fffffffffffffffull);
  }

  void Ring(GlooCommonWorld& world, const Tensor& x, GlooReduceFn sum) {
    const auto& ctx = world.context();
    const int p = world.size(), r = world.rank();
    const size_t item = x.itemsize();
    int64_t widest = 0;
    for (int i = 0; i < p; ++i) widest = std::max(widest, offsets_[i + 1] - offsets_[i]);
    if (!BoundTo(ctx.get(), x.numel(), x.dtype(), widest)) {
      if (scratch_.size() < static_cast<size_t>(widest) * item) scratch_.resize(static_cast<size_t>(widest) * item);
      data_ = ctx->createUnboundBuffer(want_.ptrs[0], x.nbytes());
      tmp_ = ctx->createUnboundBuffer(scratch_.data(), scratch_.size());
      MarkBound();
    }
    const uint64_t slot = gloo::Slot::build(kReduceScatterSlotPrefix, 0);
    auto* base = static_cast<uint8_t*>(want_.ptrs[0]);
    for (int s = 0; s < p - 1; ++s) {
      const int send_seg = ((r - s - 1) % p + p) % p, recv_seg = ((r - s - 2) % p + p) % p;
      const size_t send_len = (offsets_[send_seg + 1] - offsets_[send_seg]) * item;
      const size_t recv_count = offsets_[recv_seg + 1] - offsets_[recv_seg];
      if (recv_count) tmp_->recv((r + p - 1) % p, slot, 0, recv_count * item);
      if (send_len) data_->send((r + 1) % p, slot, offsets_[send_seg] * item, send_len);
      if (recv_count) {
        tmp_->waitRecv(world.timeout());
        uint8_t* seg = base + offsets_[recv_seg] * item;
        sum(seg, seg, scratch_.data(), recv_count);
      }
      if (send_len) data_->waitSend(world.timeout());
    }
  }

  std::vector<int64_t> offsets_;
  std::vector<uint8_t> scratch_;
  std::unique_ptr<gloo::transport::UnboundBuffer> data_, tmp_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(ReduceScatter, GLOO, ReduceScatterGlooOp);

}  // namespace hetnet
