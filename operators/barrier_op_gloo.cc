// Barrier, engine GLOO: gloo::barrier with the world's timeout.
#include <gloo/barrier.h>

#include <memory>

#include "operators/barrier_op.h"
#include "operators/communicator_op_gloo.h"

namespace hetnet {

class BarrierGlooOp final : public GlooCollectiveOp {
 public:
  using GlooCollectiveOp::GlooCollectiveOp;
  void RunOnDevice() override {
    status_.Run([&] {
      GlooCommonWorld& world = World();
      RecordLocal(0, "none");
      if (world.size() == 1) return;
      RunCollective(world, "Barrier", "gloo::barrier", 0, 0, DataType::Undefined, 0, [&] {
        const auto& ctx = world.context();
        want_.context = ctx.get();
        if (!Bound()) {
          opts_ = std::make_unique<gloo::BarrierOptions>(ctx);
          opts_->setTimeout(world.timeout());
          MarkBound();
        }
        gloo::barrier(*opts_);
      });
    });
  }

 private:
  std::unique_ptr<gloo::BarrierOptions> opts_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(Barrier, GLOO, BarrierGlooOp);

}  // namespace hetnet
