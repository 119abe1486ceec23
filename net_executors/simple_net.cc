// The sequential executor (net type "" or "simple"): every operator is created when the net is,
// and runs in order on the calling thread.
#include <map>
#include <set>
#include <string>

#include "core/net.h"
#include "core/workspace.h"
#include "core/workspace_memory.h"
#include "net_executors/op_creation.h"

namespace hetnet {

class SimpleNet final : public NetBase {
 public:
  SimpleNet(const caffe2::NetDef& def, Workspace* ws) {
    def_ = def;
    account_ = WorkspaceMemoryAccount(ws);
    ops_ = CreateNetOperators(def_, ws, /*copy_streams=*/false);
    // GPU work is queued on one stream per device here: finishing each device's last op suffices.
    std::map<Device, int> last;
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i)
      if (!ops_[i]->device().is_cpu()) last[ops_[i]->device()] = i;
    for (const auto& kv : last) finish_.push_back(kv.second);
    // A CPU op that overwrites a blob an earlier GPU op reads (a host-to-device copy reads pinned
    // memory asynchronously) first waits for the GPU work queued so far.
    std::set<std::string> read_by_gpu;
    drain_before_.assign(ops_.size(), 0);
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      const auto& op = def_.op(i);
      if (ops_[i]->device().is_cpu()) {
        for (const auto& out : op.output()) drain_before_[i] |= read_by_gpu.count(out) > 0;
      } else {
        read_by_gpu.insert(op.input().begin(), op.input().end());
      }
    }
  }

  void Run() override {
    WorkspaceMemoryScope charge_to(account_.get());  // tensors allocated here count for the workspace
    const int n = static_cast<int>(ops_.size());
    for (int i = 0; i < n; ++i) {
      try {
        if (drain_before_[i])
          for (int f : finish_) ops_[f]->Finish();
        ops_[i]->Run();
      } catch (...) {
        RethrowWithContext(OperatorRunContext(def_, i, *ops_[i]));
      }
    }
    for (int i : finish_) {
      try {
        ops_[i]->Finish();
      } catch (...) {
        RethrowWithContext(OperatorContext(def_, i));
      }
    }
  }

  const std::vector<std::unique_ptr<OperatorBase>>& operators() const override { return ops_; }

 private:
  std::vector<std::unique_ptr<OperatorBase>> ops_;
  std::vector<int> finish_;
  std::vector<char> drain_before_;          // per op: finish every device's queued work first
  std::shared_ptr<MemoryAccount> account_;  // the workspace's (total-workspace-bytes cap)
};

REGISTER_NET(simple, SimpleNet);

}  // namespace hetnet
