// CreateCommonWorld, engine GLOO: a full mesh of Gloo TCP (or ibverbs) pairs.
#include "device/collectives/gloo_common_world.h"
#include "operators/communicator_op.h"
#include "operators/create_common_world_op.h"

namespace hetnet {

class CreateCommonWorldGlooOp final : public Operator<CPUContext> {
 public:
  CreateCommonWorldGlooOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), status_(*this, ws) {
    const CommonWorldArgs a = ParseCreateCommonWorldArgs(*this);
    opts_.name = a.name;
    opts_.rank = a.rank;
    opts_.size = a.size;
    opts_.sync = a.sync;
    opts_.transport = a.transport;
    opts_.interface = a.interface;
    opts_.timeout = a.timeout;
  }
  void RunOnDevice() override {
    status_.Run([&] {
      SetCommonWorldOutput(this, 0, GlooCommonWorld::Create(opts_, StoreHandlerOfInput(*this, 0)));
    });
  }

 private:
  GlooWorldOptions opts_;
  CommunicatorStatus status_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(CreateCommonWorld, GLOO, CreateCommonWorldGlooOp);

}  // namespace hetnet
