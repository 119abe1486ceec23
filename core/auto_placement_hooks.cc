// AutoPlace's surroundings: device lists, the built-in fallback profile, the placement="auto" hook
// of net creation, and predicted beside measured after a profiled run.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "core/argument.h"
#include "core/auto_placement.h"
#include "core/error.h"
#include "core/placement.h"
#include "core/profiler.h"

namespace hetnet {

std::vector<Device> ParseDeviceList(const std::vector<std::string>& names) {
  std::vector<Device> out;
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (!seen.insert(name).second) HN_THROW(kInvalidArgument, "device '", name, "' is listed twice");
    if (name == "cpu") {
      out.push_back(Device::CPU());
      continue;
    }
    const std::string digits = name.rfind("cuda:", 0) == 0 ? name.substr(5) : "";
    const bool number = !digits.empty() && digits.size() <= 4 &&
                        digits.find_first_not_of("0123456789") == std::string::npos &&
                        (digits.size() == 1 || digits[0] != '0');
    if (!number) HN_THROW(kInvalidArgument, "unknown device '", name, "' (expected cpu or cuda:N)");
    out.push_back(Device::CUDA(std::stoi(digits)));
  }
  return out;
}

DeviceProfile ProfileFromEnvironment(int gpu_count) {
  const char* path = std::getenv("HETNET_DEVICE_PROFILE");
  if (!path || !*path) return BuiltinFallbackProfile(gpu_count);
  try {
    return DeviceProfile::Load(path);
  } catch (Error& e) {
    throw e.AddContext("reading the device profile named by HETNET_DEVICE_PROFILE");
  }
}

DeviceProfile BuiltinFallbackProfile(int gpu_count) {
  // Rough orders of magnitude for a server CPU and a datacenter GPU over PCIe; a calibrated
  // profile (`hetnet calibrate`) replaces all of them.
  DeviceProfile p;
  p.machine = MakeString("this machine (CPU and ", gpu_count, " GPU(s))");
  p.source =
      "built-in rough constants, not measured (set HETNET_DEVICE_PROFILE to a profile from `hetnet calibrate`)";
  DeviceCaps cpu;
  cpu.name = "cpu";
  cpu.gemm_gflops = {{"small", 2}, {"medium", 30}, {"large", 60}};
  cpu.conv_gflops = {{"small", 1}, {"medium", 15}, {"large", 40}};
  cpu.mem_bandwidth_gbs = 15;
  cpu.dispatch_us = 2;
  p.devices.push_back(cpu);
  for (int g = 0; g < gpu_count; ++g) {
    DeviceCaps gpu;
    gpu.name = Device::CUDA(g).str();
    gpu.gemm_gflops = {{"small", 20}, {"medium", 2000}, {"large", 20000}};
    gpu.conv_gflops = {{"small", 10}, {"medium", 1000}, {"large", 10000}};
    gpu.mem_bandwidth_gbs = 1000;
    gpu.dispatch_us = 10;
    p.devices.push_back(gpu);
    p.links.push_back({"cpu", gpu.name, true, 10, 15});
    p.links.push_back({gpu.name, "cpu", true, 10, 15});
    for (int h = 0; h < g; ++h) {
      p.links.push_back({gpu.name, Device::CUDA(h).str(), true, 50, 10});
      p.links.push_back({Device::CUDA(h).str(), gpu.name, true, 50, 10});
    }
  }
  return p;
}

bool MaybeAutoPlace(const caffe2::NetDef& def, const std::map<std::string, Device>& input_devices,
                    const std::map<std::string, TensorInfo>& input_shapes, int gpu_count,
                    AutoPlacementResult* result) {
  ArgumentHelper args(def);
  if (!args.HasArgument("placement")) return false;
  const std::string mode = args.GetSingleArgument<std::string>("placement", "");
  if (mode == "manual" || mode.empty()) return false;
  if (mode != "auto")
    HN_THROW(kInvalidArgument, "net '", def.name(), "': placement='", mode, "' (expected \"auto\" or \"manual\")");
  AutoPlacementOptions options;
  const std::string objective = args.GetSingleArgument<std::string>("placement_objective", "latency");
  if (objective == "throughput") options.objective = AutoPlacementOptions::Objective::kThroughput;
  else if (objective != "latency")
    HN_THROW(kInvalidArgument, "net '", def.name(), "': placement_objective='", objective,
             "' (expected \"latency\" or \"throughput\")");
  const DeviceProfile profile = ProfileFromEnvironment(gpu_count);
  // Candidates: the CPU and the profile's GPUs this machine has (a net must run where it is made).
  options.devices.push_back(Device::CPU());
  for (const auto& caps : profile.devices) {
    if (caps.name == "cpu") continue;
    const Device d = ParseDeviceList({caps.name}).front();
    if (d.id < gpu_count) options.devices.push_back(d);
  }
  // Blobs already in the workspace stay where they are, so reading them elsewhere costs a copy
  // every run (weights included: run the init net on the GPU for them to live there).
  options.input_devices = input_devices;
  for (const auto& [name, dev] : input_devices) options.data_inputs.insert(name);
  try {
    *result = AutoPlace(def, input_shapes, profile, options);
  } catch (Error& e) {
    throw e.AddContext(MakeString("auto placement (placement=\"auto\") of net '", def.name(), "'"));
  }
  return true;
}

CopyPassResult PlanAutoPlaced(const AutoPlacementResult& planned, const std::vector<std::string>& devices,
                              const std::map<std::string, TensorInfo>& shapes, const PlacementOptions& opts) {
  std::map<std::string, Device> input_devices;
  std::set<std::string> written;
  for (const auto& op : planned.net.op()) {
    const Device d = DeviceFromOption(op.device_option());
    for (const auto& in : op.input())
      if (!written.count(in) && !planned.data_inputs.count(in)) input_devices.emplace(in, d);
    written.insert(op.output().begin(), op.output().end());
  }
  CopyPassResult placed = PlanPlacement(planned.net, devices, input_devices, shapes, opts);
  AnnotateAutoPlacement(planned, &placed.report);
  return placed;
}

void AnnotateAutoPlacement(const AutoPlacementResult& result, PlacementReport* report) {
  size_t k = 0;
  for (auto& op : report->ops) {
    if (op.reason == "inserted copy" || k >= result.ops.size()) continue;
    op.reason = "auto: " + result.ops[k++].why;
  }
}

PredictedVsMeasured ComparePrediction(const AutoPlacementResult& result, const RunProfile& run) {
  PredictedVsMeasured out;
  out.predicted_total_us = result.predicted_us;
  out.measured_wall_us = run.wall_us;
  std::vector<double> measured(run.op_types.size(), 0);
  std::vector<char> timed(run.op_types.size(), 0);
  for (const auto& t : run.ops)
    if (t.op >= 0 && t.op < static_cast<int>(measured.size())) {
      measured[t.op] += t.dur_us;
      timed[t.op] = 1;
    }
  for (const auto& planned : result.ops) {
    PredictedVsMeasured::Row row;
    row.op = planned.op;
    row.type = planned.type;
    row.device = planned.chosen;
    auto p = planned.predicted_us.find(planned.chosen);
    row.predicted_us = p != planned.predicted_us.end() ? p->second : 0;
    out.ops.push_back(row);
  }
  // The executor's ops are the planned ones in order with copies between them; inference rewrites
  // may have fused some, so planned ops are matched by type, skipping those that are gone.
  size_t k = 0;
  for (size_t i = 0; i < run.op_types.size(); ++i) {
    if (IsCopyOpType(run.op_types[i])) {
      out.measured_copy_us += measured[i];
      continue;
    }
    size_t j = k;
    while (j < out.ops.size() && out.ops[j].type != run.op_types[i]) ++j;
    if (j == out.ops.size()) continue;
    if (timed[i]) out.ops[j].measured_us = measured[i];
    k = j + 1;
  }
  return out;
}

std::string PredictedVsMeasured::ToText() const {
  std::ostringstream s;
  char line[160];
  s << "predicted vs measured (one run)\n";
  for (const auto& r : ops) {
    if (r.measured_us >= 0)
      std::snprintf(line, sizeof(line), "  #%-4d %-24s %-8s predicted %10.1f us  measured %10.1f us\n", r.op,
                    r.type.c_str(), r.device.c_str(), r.predicted_us, r.measured_us);
    else
      std::snprintf(line, sizeof(line), "  #%-4d %-24s %-8s predicted %10.1f us  measured -\n", r.op,
                    r.type.c_str(), r.device.c_str(), r.predicted_us);
    s << line;
  }
  std::snprintf(line, sizeof(line), "  total: predicted %.1f us, measured %.1f us (%+.0f%%); copies measured %.1f us\n",
                predicted_total_us, measured_wall_us,
                predicted_total_us > 0 ? (measured_wall_us / predicted_total_us - 1) * 100 : 0.0, measured_copy_us);
  s << line;
  return s.str();
}

}  // namespace hetnet
