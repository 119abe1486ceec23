// The sequential executor (net type "" or "simple"): every operator is created when the net is,
// and runs in order on the calling thread.
#include "core/net.h"
#include "core/workspace.h"
#include "core/workspace_memory.h"
#include "net_executors/op_creation.h"
#include "net_executors/sequential_plan.h"

namespace hetnet {

class SimpleNet final : public NetBase {
 public:
  SimpleNet(const caffe2::NetDef& def, Workspace* ws) {
    def_ = def;
    account_ = WorkspaceMemoryAccount(ws);
    ops_ = CreateNetOperators(def_, ws, /*copy_streams=*/false);
    plan_ = SequentialPlan::For(def_, ops_);
  }

  void Run() override {
    WorkspaceMemoryScope charge_to(account_.get());  // tensors allocated here count for the workspace
    const int n = static_cast<int>(ops_.size());
    for (int i = 0; i < n; ++i) {
      try {
        plan_.BeforeOp(i, ops_);
        ops_[i]->Run();
      } catch (...) {
        RethrowWithContext(OperatorRunContext(def_, i, *ops_[i]));
      }
    }
    plan_.FinishAll(def_, ops_);
  }

  const std::vector<std::unique_ptr<OperatorBase>>& operators() const override { return ops_; }

 private:
  std::vector<std::unique_ptr<OperatorBase>> ops_;
  SequentialPlan plan_;
  std::shared_ptr<MemoryAccount> account_;  // the workspace's (total-workspace-bytes cap)
};

REGISTER_NET(simple, SimpleNet);

}  // namespace hetnet
