// The sequential executor (net type "" or "simple"): every operator is created when the net is,
// and runs in order on the calling thread.
#include <map>

#include "core/net.h"
#include "core/workspace.h"
#include "net_executors/op_creation.h"

namespace hetnet {

class SimpleNet final : public NetBase {
 public:
  SimpleNet(const caffe2::NetDef& def, Workspace* ws) {
    def_ = def;
    ops_ = CreateNetOperators(def_, ws, /*copy_streams=*/false);
    // GPU work is queued on one stream per device here: finishing each device's last op suffices.
    std::map<Device, int> last;
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i)
      if (!ops_[i]->device().is_cpu()) last[ops_[i]->device()] = i;
    for (const auto& kv : last) finish_.push_back(kv.second);
  }

  void Run() override {
    const int n = static_cast<int>(ops_.size());
    for (int i = 0; i < n; ++i) {
      try {
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
};

REGISTER_NET(simple, SimpleNet);

}  // namespace hetnet
