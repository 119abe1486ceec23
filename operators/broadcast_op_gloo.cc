// Broadcast, engine GLOO: gloo::broadcast (binomial tree from root) of X1, then X1 into X2..Xn.
#include <gloo/broadcast.h>

#include <memory>

#include "operators/broadcast_op.h"
#include "operators/communicator_op_gloo.h"

namespace hetnet {

class BroadcastGlooOp final : public GlooCollectiveOp {
 public:
  using GlooCollectiveOp::GlooCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      GlooCommonWorld& world = World();
      const int root = BroadcastRootArgument(*this, world.size());
      const int n = InputSize() - 1;
      CheckInPlaceTensors(*this, 1, n, n);
      const Tensor& x = Input(1);
      if (!GlooCopyTypeHandled(x.dtype())) ThrowUnhandledType(*this, x.dtype());
      CollectOutputPointers(n, x.dtype());
      RecordLocal(x.nbytes() * n, "local copy");
      if (x.numel() == 0) return;
      if (world.size() > 1) {
        RunCollective(world, "Broadcast", "gloo::broadcast binomial tree", x.nbytes(), x.numel(), x.dtype(), root, [&] {
          const auto& ctx = world.context();
          if (!BoundTo(ctx.get(), x.numel(), x.dtype(), root)) {
            opts_ = std::make_unique<gloo::BroadcastOptions>(ctx);
            opts_->setOutput<uint8_t>(static_cast<uint8_t*>(want_.ptrs[0]), x.nbytes());  // bytes: any dtype
            opts_->setRoot(root);
            opts_->setTimeout(world.timeout());
            MarkBound();
          }
          gloo::broadcast(*opts_);
        });
      }
      CopyFirstToOthers(x.nbytes());
    });
  }

 private:
  std::unique_ptr<gloo::BroadcastOptions> opts_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(Broadcast, GLOO, BroadcastGlooOp);

}  // namespace hetnet
