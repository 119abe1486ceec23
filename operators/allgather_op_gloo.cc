// Allgather, engine GLOO: this rank's inputs are copied into its slot of Y, then gloo::allgather
// (ring) fills the other ranks' slots in place.
#include <gloo/allgather.h>

#include <memory>

#include "operators/allgather_op.h"
#include "operators/communicator_op_gloo.h"

namespace hetnet {

class AllgatherGlooOp final : public GlooCollectiveOp {
 public:
  using GlooCollectiveOp::GlooCollectiveOp;

  void RunOnDevice() override {
    status_.Run([&] {
      GlooCommonWorld& world = World();
      const int n = InputSize() - 1;
      const Tensor& x = Input(1);
      for (int i = 1; i <= n; ++i) {
        const Tensor& t = Input(i);
        HN_ENFORCE(!IsInputOutputAlias(i, 0), type(), ": the output ('", def().output(0),
                   "') cannot be one of the inputs");
        HN_ENFORCE(t.numel() == x.numel() && t.dtype() == x.dtype(), type(),
                   ": every input must have the same number of elements and dtype, but '", def().input(i), "' is ",
                   t.DebugString(), " and '", def().input(1), "' is ", x.DebugString());
      }
      if (!GlooCopyTypeHandled(x.dtype())) ThrowUnhandledType(*this, x.dtype());
      const int64_t total = static_cast<int64_t>(n) * x.numel() * world.size();
      Tensor* y = Output(0);
      if (y->ndim() != 1 || y->numel() != total || y->dtype() != x.dtype()) y = Output(0, {total}, x.dtype());
      auto* out = static_cast<uint8_t*>(y->raw_mutable_data(x.dtype()));
      const size_t bytes = x.nbytes();
      for (int i = 0; i < n; ++i)
        std::memcpy(out + (static_cast<size_t>(world.rank()) * n + i) * bytes, Input(1 + i).raw_data(), bytes);
      RecordLocal(total * x.itemsize(), "local copy");
      if (total == 0 || world.size() == 1) return;
      RunCollective(world, "Allgather", "gloo::allgather ring", total * x.itemsize(), total, x.dtype(), 0, [&] {
        const auto& ctx = world.context();
        want_.ptrs.assign(1, out);
        if (!BoundTo(ctx.get(), total, x.dtype())) {
          opts_ = std::make_unique<gloo::AllgatherOptions>(ctx);
          opts_->setOutput<uint8_t>(out, static_cast<size_t>(total) * x.itemsize());  // bytes: any dtype
          opts_->setTimeout(world.timeout());
          MarkBound();
        }
        gloo::allgather(*opts_);
      });
    });
  }

 private:
  std::unique_ptr<gloo::AllgatherOptions> opts_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(Allgather, GLOO, AllgatherGlooOp);

}  // namespace hetnet
