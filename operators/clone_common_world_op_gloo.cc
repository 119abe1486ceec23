// CloneCommonWorld, engine GLOO: gloo::rendezvous::ContextFactory over the existing world's pairs.
#include "operators/clone_common_world_op.h"
#include "operators/communicator_op_gloo.h"

namespace hetnet {

class CloneCommonWorldGlooOp final : public GlooCollectiveOp {
 public:
  CloneCommonWorldGlooOp(const caffe2::OperatorDef& def, Workspace* ws)
      : GlooCollectiveOp(def, ws), sync_(GetSingleArgument<bool>("sync", false)) {}
  void RunOnDevice() override {
    status_.Run([&] {
      const std::string name = def().name().empty() ? def().output(0) : def().name();
      SetCommonWorldOutput(this, 0, World().Clone(name, sync_));
    });
  }

 private:
  bool sync_;
};

REGISTER_CPU_OPERATOR_WITH_ENGINE(CloneCommonWorld, GLOO, CloneCommonWorldGlooOp);

}  // namespace hetnet
