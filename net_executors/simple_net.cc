// The sequential executor (net type "" or "simple"): every operator is created when the net is,
// and runs in order on the calling thread.
#include <set>

#include "core/net.h"
#include "core/workspace.h"

namespace hetnet {

class SimpleNet final : public NetBase {
 public:
  SimpleNet(const caffe2::NetDef& def, Workspace* ws) {
    def_ = def;
    std::set<std::string> available(def.external_input().begin(), def.external_input().end());
    for (int i = 0; i < def.op_size(); ++i) {
      const auto& op_def = def.op(i);
      try {
        for (int k = 0; k < op_def.input_size(); ++k) {
          const std::string& in = op_def.input(k);
          if (available.count(in)) {
            if (!ws->HasBlob(in)) ws->CreateBlob(in);  // fed later, before Run
            continue;
          }
          HN_CHECK_KIND(kNotFound, ws->HasBlob(in), "input ", k, " ('", in,
                        "') is neither an external input of the net, nor an output of an earlier operator, "
                        "nor a blob in the workspace");
        }
        ops_.push_back(CreateOperator(op_def, ws));
      } catch (...) {
        RethrowWithContext(OperatorContext(def_, i));
      }
      for (const auto& out : op_def.output()) available.insert(out);
    }
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
