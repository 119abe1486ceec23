// Reduce, engine GLOO: gloo::reduce (ring reduce-scatter, then gather to root).
#include <gloo/reduce.h>

#include <memory>

#include "operators/collective_reduce_op.h"
#include "operators/communicator_op_gloo.h"

namespace hetnet {

class ReduceGlooOp final : public GlooCollectiveOp {
 public:
  using GlooCollectiveOp::GlooCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      GlooCommonWorld& world = World();
      const int root = BroadcastRootArgument(*this, world.size());
      const Tensor& x = Input(1);
      const GlooReduceFn sum = GlooSumFor(x.dtype());
      if (!sum) ThrowUnhandledType(*this, x.dtype());
      const bool in_place = IsInputOutputAlias(1, 0);
      Tensor* y = Output(0);
      if (!in_place && (y->shape() != x.shape() || y->dtype() != x.dtype())) y = Output(0, x.shape(), x.dtype());
      want_.ptrs.clear();
      want_.ptrs.push_back(const_cast<void*>(x.raw_data()));  // Gloo only reads its input
      want_.ptrs.push_back(y->raw_mutable_data(x.dtype()));
      RecordLocal(x.nbytes(), "local copy");
      if (x.numel() == 0) return;
      if (world.size() == 1) {
        if (!in_place) std::memcpy(want_.ptrs[1], want_.ptrs[0], x.nbytes());
        return;
      }
      RunCollective(world, "Reduce", "gloo::reduce ring + gather", x.nbytes(), x.numel(), x.dtype(), root, [&] {
        const auto& ctx = world.context();
        if (!BoundTo(ctx.get(), x.numel(), x.dtype(), root)) {
          opts_ = std::make_unique<gloo::ReduceOptions>(ctx);
          switch (x.itemsize()) {
            case 2: Bind<uint16_t>(x.numel(), in_place); break;
            case 4: Bind<uint32_t>(x.numel(), in_place); break;
            default: Bind<uint64_t>(x.numel(), in_place); break;
          }
          opts_->setRoot(root);
          opts_->setReduceFunction(sum);
          opts_->setTimeout(world.timeout());
          MarkBound();
        }
        gloo::reduce(*opts_);
      });
    });
  }

 private:
  template <typename T>
  void Bind(int64_t numel, bool in_place) {
    if (!in_place) opts_->setInput<T>(static_cast<T*>(want_.ptrs[0]), static_cast<size_t>(numel));
    opts_->setOutput<T>(static_cast<T*>(want_.ptrs[1]), static_cast<size_t>(numel));
  }

  std::unique_ptr<gloo::ReduceOptions> opts_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(Reduce, GLOO, ReduceGlooOp);

}  // namespace hetnet
