#include "core/measured_op_costs.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/net.h"
#include "core/op_cost.h"
#include "core/operator.h"
#include "core/profiler.h"
#include "core/workspace.h"

namespace hetnet {

int RecordMeasuredOps(DeviceProfile* profile, const NetBase& net, const Workspace& ws,
                      const std::vector<RunProfile>& runs, double time_scale) {
  HN_ENFORCE(profile != nullptr, "RecordMeasuredOps: no profile");
  HN_ENFORCE(time_scale > 0 && std::isfinite(time_scale), "RecordMeasuredOps: time_scale must be positive, got ",
             time_scale);
  const auto& ops = net.operators();
  std::map<int, std::vector<double>> times;  // op index -> one time per run
  for (const RunProfile& run : runs) {
    HN_ENFORCE(run.op_types.size() == ops.size(), "RecordMeasuredOps: a profiled run of net '", run.net_name,
               "' has ", run.op_types.size(), " ops, net '", net.name(), "' has ", ops.size());
    for (const OpTiming& t : run.ops) {
      if (t.op < 0 || static_cast<size_t>(t.op) >= ops.size()) continue;
      const bool gpu = !ops[t.op]->device().is_cpu();
      const double us = gpu ? std::max(t.dur_us, t.host_dur_us) : t.dur_us;
      if (us >= 0) times[t.op].push_back(us);
    }
  }
  // Ops of one signature on one device (the repeated layers of a net) pool their times.
  std::map<std::string, std::vector<double>> by_key;
  for (auto& kv : times) {
    const OperatorBase& op = *ops[kv.first];
    if (IsCopyOpType(op.type())) continue;
    std::vector<TensorInfo> inputs;
    for (const auto& name : op.def().input()) {
      const Blob* b = ws.GetBlob(name);
      if (!b || !b->IsTensor()) break;
      inputs.push_back(TensorInfo::Of(b->GetTensor().shape(), b->GetTensor().dtype()));
    }
    if (inputs.size() != static_cast<size_t>(op.def().input_size())) continue;
    const std::string signature = OpSignature(op.def(), inputs);
    if (signature.empty()) continue;
    auto& pooled = by_key[op.device().str() + "|" + signature];
    pooled.insert(pooled.end(), kv.second.begin(), kv.second.end());
  }
  int written = 0;
  for (auto& kv : by_key) {
    std::vector<double>& v = kv.second;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    profile->measured_op_us[kv.first] = v[v.size() / 2] * time_scale;
    ++written;
  }
  return written;
}

}  // namespace hetnet
