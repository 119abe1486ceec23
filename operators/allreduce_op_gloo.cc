// Allreduce, engine GLOO: gloo::allreduce (ring) with per-call options, rebound when the pointers,
// the size, the dtype or the context change.
#include <gloo/allreduce.h>

#include <memory>

#include "operators/allreduce_op.h"
#include "operators/communicator_op_gloo.h"

namespace hetnet {

class AllreduceGlooOp final : public GlooCollectiveOp {
 public:
  using GlooCollectiveOp::GlooCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      GlooCommonWorld& world = World();
      const int n = InputSize() - 1;
      CheckInPlaceTensors(*this, 1, n, n);
      const Tensor& x = Input(1);
      const GlooReduceFn sum = GlooSumFor(x.dtype());
      if (!sum) ThrowUnhandledType(*this, x.dtype());
      CollectOutputPointers(n, x.dtype());
      RecordLocal(x.nbytes() * n, "local sum");
      if (x.numel() == 0) return;
      if (world.size() == 1) {
        SumLocally(sum, x.numel());
        CopyFirstToOthers(x.nbytes());
        return;
      }
      RunCollective(world, "Allreduce", "gloo::allreduce ring", x.nbytes() * n, x.numel(), x.dtype(), 0, [&] {
        const auto& ctx = world.context();
        if (!BoundTo(ctx.get(), x.numel(), x.dtype())) {
          opts_ = std::make_unique<gloo::AllreduceOptions>(ctx);
          // Gloo takes the element size from the pointer type only; the reduce function knows the dtype.
          switch (x.itemsize()) {
            case 2: Bind<uint16_t>(x.numel()); break;
            case 4: Bind<uint32_t>(x.numel()); break;
            default: Bind<uint64_t>(x.numel()); break;
          }
          opts_->setReduceFunction(sum);
          opts_->setTimeout(world.timeout());
          MarkBound();
        }
        gloo::allreduce(*opts_);
      });
    });
  }

 private:
  template <typename T>
  void Bind(int64_t numel) {
    opts_->setOutputs<T>(reinterpret_cast<T**>(want_.ptrs.data()), want_.ptrs.size(), static_cast<size_t>(numel));
  }

  std::unique_ptr<gloo::AllreduceOptions> opts_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(Allreduce, GLOO, AllreduceGlooOp);

}  // namespace hetnet
