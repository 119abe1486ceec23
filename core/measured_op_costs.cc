#include "core/measured_op_costs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "core/error.h"
#include "core/net.h"
#include "core/op_cost.h"
#include "core/operator.h"
#include "core/profiler.h"
#include "core/workspace.h"

namespace hetnet {

namespace {

double Median(std::vector<double>* v) {
  std::nth_element(v->begin(), v->begin() + v->size() / 2, v->end());
  return (*v)[v->size() / 2];
}

// A copy's times, less the bytes' time over the profile's link between its input's and output's
// devices (the pinned or pageable link, as the host side's memory is), into
// (*out)["<from>-><to>"]. Only copies whose bytes take at most half their time count: in a larger
// one the remainder is mostly the bandwidth figure's error, not a fixed cost. Nothing without both
// tensors or such a link.
void AddCopyLatency(const DeviceProfile& profile, const OperatorBase& op, const Workspace& ws,
                    const std::vector<double>& times_us, double time_scale,
                    std::map<std::string, std::vector<double>>* out) {
  if (op.def().input_size() < 1 || op.def().output_size() < 1) return;
  const Blob* in = ws.GetBlob(op.def().input(0));
  const Blob* res = ws.GetBlob(op.def().output(0));
  if (!in || !res || !in->IsTensor() || !res->IsTensor()) return;
  const Tensor &src = in->GetTensor(), &dst = res->GetTensor();
  const std::string from = src.device().str(), to = dst.device().str();
  if (from == to) return;
  const Tensor& host = src.device().is_cpu() ? src : dst;
  const LinkCaps* link = profile.FindLink(from, to, host.storage_pinned() || !host.device().is_cpu());
  if (!link || link->bandwidth_gbs <= 0) link = profile.FindLink(from, to, !host.storage_pinned());
  if (!link || link->bandwidth_gbs <= 0) return;
  const double bytes_us = static_cast<double>(src.nbytes()) / (link->bandwidth_gbs * 1e3);
  for (double us : times_us) {
    const double t = us * time_scale;
    if (bytes_us <= 0.5 * t) (*out)[from + "->" + to].push_back(t - bytes_us);
  }
}

}  // namespace

std::map<int, GpuOpTime> SplitGpuOpTimes(const RunProfile& run, const std::vector<char>& on_gpu,
                                         const std::vector<char>& is_copy) {
  const size_t n = std::min(on_gpu.size(), is_copy.size());
  std::map<int, GpuOpTime> out;
  for (const OpTiming& t : run.ops) {
    // Copies are links, not device work.
    if (t.op < 0 || static_cast<size_t>(t.op) >= n || !on_gpu[t.op] || is_copy[t.op] || t.dur_us < 0) continue;
    // The kernel cannot start before the host has issued it, however early the start event ran (on
    // an H200, ResNet-18's start events ran as soon as the previous op ended while the host was
    // still inside a 110 us cuDNN call).
    const double issued = std::max(t.start_us, t.host_start_us + t.host_dur_us);
    out[t.op] = {t.host_dur_us, std::max(t.start_us + t.dur_us - issued, 0.0)};
  }
  return out;
}

int RecordMeasuredOps(DeviceProfile* profile, const NetBase& net, const Workspace& ws,
                      const std::vector<RunProfile>& runs, double time_scale, std::set<std::string>* keys) {
  HN_ENFORCE(profile != nullptr, "RecordMeasuredOps: no profile");
  HN_ENFORCE(time_scale > 0 && std::isfinite(time_scale), "RecordMeasuredOps: time_scale must be positive, got ",
             time_scale);
  const auto& ops = net.operators();
  std::map<int, std::vector<double>> times;  // op index -> one time per run
  std::map<int, std::vector<double>> launch, device;  // GPU ops: the two parts, one per run
  std::vector<char> on_gpu(ops.size()), is_copy(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    on_gpu[i] = !ops[i]->device().is_cpu();
    is_copy[i] = IsCopyOpType(ops[i]->type());
  }
  for (const RunProfile& run : runs) {
    HN_ENFORCE(run.op_types.size() == ops.size(), "RecordMeasuredOps: a profiled run of net '", run.net_name,
               "' has ", run.op_types.size(), " ops, net '", net.name(), "' has ", ops.size());
    for (const OpTiming& t : run.ops) {
      if (t.op < 0 || static_cast<size_t>(t.op) >= ops.size()) continue;
      // A GPU op, or a copy (its waits are on the host), costs the longer of device and host time.
      const bool gpu = on_gpu[t.op] || is_copy[t.op];
      const double us = gpu ? std::max(t.dur_us, t.host_dur_us) : t.dur_us;
      if (us >= 0) times[t.op].push_back(us);
    }
    for (const auto& [op, part] : SplitGpuOpTimes(run, on_gpu, is_copy)) {
      launch[op].push_back(part.launch_us);
      device[op].push_back(part.device_us);
    }
  }
  // Ops of one signature on one device (the repeated layers of a net) pool their times.
  std::map<std::string, std::vector<double>> by_key, launch_by_key, device_by_key;
  std::map<std::string, std::vector<double>> copy_latency;  // "<from>-><to>" -> time beyond bytes / bandwidth
  for (auto& kv : times) {
    const OperatorBase& op = *ops[kv.first];
    if (IsCopyOpType(op.type())) {
      AddCopyLatency(*profile, op, ws, kv.second, time_scale, &copy_latency);
      continue;
    }
    std::vector<TensorInfo> inputs;
    for (const auto& name : op.def().input()) {
      const Blob* b = ws.GetBlob(name);
      if (!b || !b->IsTensor()) break;
      inputs.push_back(TensorInfo::Of(b->GetTensor().shape(), b->GetTensor().dtype()));
    }
    if (inputs.size() != static_cast<size_t>(op.def().input_size())) continue;
    const std::string signature = OpSignature(op.def(), inputs);
    if (signature.empty()) continue;
    const std::string key = op.device().str() + "|" + signature;
    auto pool = [&](std::map<std::string, std::vector<double>>* into, const std::vector<double>& v) {
      (*into)[key].insert((*into)[key].end(), v.begin(), v.end());
    };
    pool(&by_key, kv.second);
    if (launch.count(kv.first)) pool(&launch_by_key, launch[kv.first]), pool(&device_by_key, device[kv.first]);
  }
  int written = 0;
  for (auto& kv : by_key) {
    profile->measured_op_us[kv.first] = Median(&kv.second) * time_scale;
    if (keys) keys->insert(kv.first);
    ++written;
  }
  for (auto& kv : launch_by_key) {
    profile->measured_launch_us[kv.first] = Median(&kv.second) * time_scale;
    profile->measured_device_us[kv.first] = Median(&device_by_key[kv.first]) * time_scale;
  }
  for (auto& kv : copy_latency) {
    profile->measured_copy_latency_us[kv.first] = Median(&kv.second);
    ++written;
  }
  return written;
}

}  // namespace hetnet
