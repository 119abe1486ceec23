#include "net_executors/sequential_plan.h"

#include <map>
#include <set>
#include <string>

#include "core/net.h"

namespace hetnet {

SequentialPlan SequentialPlan::For(const caffe2::NetDef& def, const std::vector<std::unique_ptr<OperatorBase>>& ops) {
  SequentialPlan p;
  std::map<Device, int> last;
  for (int i = 0; i < static_cast<int>(ops.size()); ++i)
    if (!ops[i]->device().is_cpu()) last[ops[i]->device()] = i;
  for (const auto& kv : last) p.finish.push_back(kv.second);
  std::set<std::string> read_by_gpu;
  p.drain_before.assign(ops.size(), 0);
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    const auto& op = def.op(i);
    if (ops[i]->device().is_cpu()) {
      for (const auto& out : op.output()) p.drain_before[i] |= read_by_gpu.count(out) > 0;
    } else {
      read_by_gpu.insert(op.input().begin(), op.input().end());
    }
  }
  return p;
}

void SequentialPlan::BeforeOp(int i, const std::vector<std::unique_ptr<OperatorBase>>& ops) const {
  if (drain_before[i])
    for (int f : finish) ops[f]->Finish();
}

void SequentialPlan::FinishAll(const caffe2::NetDef& def, const std::vector<std::unique_ptr<OperatorBase>>& ops) const {
  for (int i : finish) {
    try {
      ops[i]->Finish();
    } catch (...) {
      RethrowWithContext(OperatorContext(def, i));
    }
  }
}

}  // namespace hetnet
