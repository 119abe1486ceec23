// AutoPlace's cost model: the net reduced to ids with per-device op times, copy costs and memory
// rules (BuildProblem). The simulation of a placement is in auto_placement_simulate.cc.
#include <algorithm>
#include <set>
#include <tuple>

#include "core/auto_placement_model.h"
#include "core/checked_size.h"
#include "core/error.h"
#include "core/op_cost.h"
#include "core/operator.h"
#include "core/dag_graph.h"
#include "core/net_type.h"

namespace hetnet {
namespace auto_placement {

namespace {

double BytesOf(const TensorInfo& t) {
  if (!t.known) return 0;
  try {
    return static_cast<double>(CheckedNumel(t.dims, "inferred shape")) * static_cast<double>(ItemSize(t.dtype));
  } catch (const Error&) {
    return 0;  // a shape no tensor can have: the kernel reports it; the planner ignores it
  }
}

// Sustained GFLOPS of `table` for the class of `flops`; a missing class takes the nearest one.
double Gflops(const std::map<std::string, double>& table, double flops) {
  static const char* order[] = {"small", "medium", "large"};
  const int want = static_cast<int>(ShapeClassOf(flops));
  for (int dist = 0; dist < 3; ++dist)
    for (int c : {want - dist, want + dist}) {
      if (c < 0 || c > 2) continue;
      auto it = table.find(order[c]);
      if (it != table.end() && it->second > 0) return it->second;
    }
  return 0;
}

// The work of `cost` on `caps`' device, dispatch excluded.
double WorkUs(const DeviceCaps& caps, const OpCost& cost, double correction) {
  // Bandwidth-bound ops (kMemory) cost their bytes: their few FLOPs per element are no GEMM.
  const auto& table = cost.kind == OpKind::kConv ? caps.conv_gflops : caps.gemm_gflops;
  const double gflops = cost.kind == OpKind::kMemory ? 0 : Gflops(table, cost.flops);
  const double flop_us = gflops > 0 ? cost.flops / (gflops * 1e3) : 0;
  const double bytes = cost.bytes_read + cost.bytes_written;
  const double mem_us = caps.mem_bandwidth_gbs > 0 ? bytes / (caps.mem_bandwidth_gbs * 1e3) : 0;
  return std::max(flop_us, mem_us) * correction;
}

// An op's time on a device: measured where the profile has its signature there, else estimated;
// on a GPU as the host's launch and the device's part (Problem::launch_us).
void OpTime(const DeviceProfile& profile, const Device& device, const std::string& dev, const std::string& type,
            const std::string& signature, const OpCost& cost, double* launch_us, double* device_us) {
  *launch_us = 0;
  if (!signature.empty() && profile.MeasuredSplit(dev, signature, launch_us, device_us)) return;
  const double measured = signature.empty() ? -1 : profile.MeasuredUs(dev, signature);
  if (measured >= 0) {
    *device_us = measured;  // one time for both parts (recorded before the split, or a CPU op)
    return;
  }
  const DeviceCaps& caps = *profile.Find(dev);
  const double work = WorkUs(caps, cost, profile.Correction(dev, type));
  if (device.is_cpu()) {
    *device_us = caps.dispatch_us + work;
  } else {
    *launch_us = caps.dispatch_us;
    *device_us = work;
  }
}

std::function<bool(const std::string&, const Device&)> RegistryKernels() {
  const bool cuda_registry = HasCudaSupport();  // a CPU-only build registers no CUDA kernels at all
  return [cuda_registry](const std::string& type, const Device& d) {
    if (d.is_cpu()) return OperatorRegistry::Has(type, DeviceType::CPU);
    return !cuda_registry || !OperatorRegistry::Engines(type, DeviceType::CUDA).empty();
  };
}

std::vector<Device> Candidates(const DeviceProfile& profile, const AutoPlacementOptions& options) {
  std::vector<Device> devs{Device::CPU()};
  if (options.devices.empty()) {
    for (const auto& caps : profile.devices)
      if (caps.name != "cpu") devs.push_back(ParseDeviceList({"cpu", caps.name}).back());
  } else {
    for (const auto& d : options.devices)
      if (std::find(devs.begin(), devs.end(), d) == devs.end()) devs.push_back(d);
  }
  for (const auto& d : devs)
    if (!profile.Find(d.str())) {
      std::string have;
      for (const auto& c : profile.devices) have += (have.empty() ? "" : ", ") + c.name;
      HN_THROW(kNotFound, "device '", d.str(), "' is not in the device profile (", profile.machine,
               "; it describes: ", have.empty() ? "nothing" : have, ")");
    }
  return devs;
}

void FillLinks(const DeviceProfile& profile, Problem* p) {
  const int n = p->n_dev;
  p->us_per_byte.assign(n * n, 0);
  p->latency_us.assign(n * n, 0);
  auto find = [&](const std::string& a, const std::string& b) {
    const LinkCaps* l = profile.FindLink(a, b, true);
    if (!l || l->bandwidth_gbs <= 0) l = profile.FindLink(a, b, false);
    return (l && l->bandwidth_gbs > 0) ? l : nullptr;
  };
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const LinkCaps* l = find(p->dev_names[a], p->dev_names[b]);
      if (l) {
        p->us_per_byte[a * n + b] = 1.0 / (l->bandwidth_gbs * 1e3);
        auto measured = profile.measured_copy_latency_us.find(p->dev_names[a] + "->" + p->dev_names[b]);
        p->latency_us[a * n + b] = measured != profile.measured_copy_latency_us.end() ? measured->second : l->latency_us;
        continue;
      }
      // GPU to GPU without a direct link: through the host.
      const LinkCaps* up = a && b ? find(p->dev_names[a], "cpu") : nullptr;
      const LinkCaps* down = a && b ? find("cpu", p->dev_names[b]) : nullptr;
      if (!up || !down)
        HN_THROW(kNotFound, "the device profile (", profile.machine, ") has no copy link ", p->dev_names[a], " -> ",
                 p->dev_names[b]);
      p->us_per_byte[a * n + b] = 1.0 / (up->bandwidth_gbs * 1e3) + 1.0 / (down->bandwidth_gbs * 1e3);
      p->latency_us[a * n + b] = up->latency_us + down->latency_us;
    }
}

}  // namespace

Problem BuildProblem(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& input_shapes,
                     const DeviceProfile& profile, const AutoPlacementOptions& options,
                     std::vector<std::string>* pin_reasons) {
  Problem p;
  p.devs = Candidates(profile, options);
  p.n_dev = static_cast<int>(p.devs.size());
  for (const auto& d : p.devs) p.dev_names.push_back(d.str());
  p.throughput = options.objective == AutoPlacementOptions::Objective::kThroughput;
  p.n_ops = net.op_size();
  p.sequential = !IsParallelNetType(net.type());
  auto dev_index = [&](const Device& d, int fallback) {
    for (int k = 0; k < p.n_dev; ++k)
      if (p.devs[k] == d) return k;
    return fallback;
  };
  std::map<std::string, int> ids;
  auto blob = [&](const std::string& name) {
    auto it = ids.emplace(name, p.n_blobs);
    if (it.second) {
      ++p.n_blobs;
      p.blob_names.push_back(name);
      p.bytes.push_back(0);
    }
    return it.first->second;
  };
  const auto has_kernel = options.has_kernel ? options.has_kernel : RegistryKernels();
  std::map<std::string, TensorInfo> shapes = input_shapes;
  std::set<std::string> written;
  std::vector<std::string> read_first;  // read before the net writes them, in order
  std::vector<int> last_access;
  pin_reasons->assign(p.n_ops, "");
  for (int i = 0; i < p.n_ops; ++i) {
    const auto& op = net.op(i);
    p.types.push_back(op.type());
    const OpSchema* schema = OpSchemaRegistry::Find(op.type());
    std::vector<TensorInfo> in, out(op.output_size());
    for (const auto& name : op.input()) {
      auto s = shapes.find(name);
      in.push_back(s == shapes.end() ? TensorInfo::Unknown() : s->second);
    }
    if (schema && schema->HasShapeInference()) {
      try {
        out = schema->InferShapes(op, in);
        out.resize(op.output_size());
      } catch (const Error&) {  // bad shapes are the kernel's to report
        out.assign(op.output_size(), TensorInfo::Unknown());
      }
    }
    for (int k = 0; k < op.output_size(); ++k)
      if (out[k].known && BytesOf(out[k]) > 0) shapes[op.output(k)] = out[k]; else shapes.erase(op.output(k));
    const OpCost cost = CostOf(op, in, out);
    const std::string signature = profile.measured_op_us.empty() ? "" : OpSignature(op, in);
    // Compute time (measured where the profile has this op's signature on the device, else
    // estimated) and input/output devices on each candidate.
    // On a GPU, the host's launch apart from the device's time (Problem::launch_us).
    std::vector<double> times(p.n_dev, kInf), launches(p.n_dev, 0);
    std::vector<std::vector<int>> in_need(p.n_dev), out_need(p.n_dev);
    for (int d = 0; d < p.n_dev; ++d) {
      if (has_kernel(op.type(), p.devs[d]))
        OpTime(profile, p.devs[d], p.dev_names[d], op.type(), signature, cost, &launches[d], &times[d]);
      std::vector<Device> ins(op.input_size(), p.devs[d]), outs(op.output_size(), p.devs[d]);
      if (schema) {
        try {
          std::tie(ins, outs) = schema->InferDevices(op, p.devs[d]);
        } catch (const Error&) {  // malformed ops fail at net creation with context
        }
      }
      for (const auto& x : ins) in_need[d].push_back(dev_index(x, d));
      for (const auto& x : outs) out_need[d].push_back(dev_index(x, d));
      in_need[d].resize(op.input_size(), d);
      out_need[d].resize(op.output_size(), d);
    }
    // Pins: the user's own device option, unless overridden; types with no kernel anywhere.
    int pin = -1;
    if (op.has_device_option() && !options.override_pinned) {
      const Device want = DeviceFromOption(op.device_option());
      pin = dev_index(want, -1);
      if (pin < 0)
        HN_THROW(kInvalidArgument, "operator #", i, " (", op.type(), ") of net '", net.name(), "' is pinned to ",
                 want.str(), ", which is not among the candidate devices");
      (*pin_reasons)[i] = "pinned by the user";
      if (times[pin] == kInf) {  // net creation runs its CPU kernel there (CPU fallback)
        pin = 0;
        (*pin_reasons)[i] = MakeString("pinned by the user to ", want.str(), ", which has no kernel: CPU fallback");
      }
    } else if (std::all_of(times.begin(), times.end(), [](double t) { return t == kInf; })) {
      pin = 0;
      (*pin_reasons)[i] = "no kernel on any candidate device (net creation reports it)";
      times[0] = 0;
    }
    p.pinned.push_back(pin);
    p.compute_us.push_back(times);
    p.launch_us.push_back(launches);
    p.in_need.push_back(in_need);
    p.out_need.push_back(out_need);
    std::vector<int> ib, ob;
    for (const auto& name : op.input()) {
      if (!written.count(name) && !ids.count(name)) read_first.push_back(name);
      ib.push_back(blob(name));
    }
    for (const auto& name : op.output()) {
      ob.push_back(blob(name));
      written.insert(name);
    }
    last_access.resize(p.n_blobs, -1);
    for (int b : ib) last_access[b] = i;
    for (int b : ob) last_access[b] = i;
    p.in_blobs.push_back(ib);
    p.out_blobs.push_back(ob);
  }
  for (const auto& [name, id] : ids) {
    auto s = shapes.find(name);
    auto given = input_shapes.find(name);
    p.bytes[id] = std::max(s == shapes.end() ? 0.0 : BytesOf(s->second),
                           given == input_shapes.end() ? 0.0 : BytesOf(given->second));
  }
  p.parents = BuildDependencyGraph(net).parents;
  // Data inputs live at home and are copied per run; other blobs read first are parameters.
  std::set<std::string> data = options.data_inputs;
  if (data.empty()) {
    if (net.external_input_size() > 0) data.insert(net.external_input(0));
    else if (!read_first.empty()) data.insert(read_first.front());
  }
  p.home.assign(p.n_blobs, -1);
  p.param.assign(p.n_blobs, 0);
  for (const auto& name : read_first) {
    const int b = ids[name];
    if (data.count(name) || written.count(name)) {
      auto d = options.input_devices.find(name);
      p.home[b] = d == options.input_devices.end() ? 0 : dev_index(d->second, 0);
    } else {
      p.param[b] = 1;
    }
  }
  // Final outputs: the declared ones, else what the net writes and never reads afterwards.
  std::set<int> finals;
  for (const auto& name : net.external_output())
    if (written.count(name)) finals.insert(ids[name]);
  if (net.external_output_size() == 0) {
    std::vector<int> last_write(p.n_blobs, -1), last_read(p.n_blobs, -1);
    for (int i = 0; i < p.n_ops; ++i) {
      for (int b : p.in_blobs[i]) last_read[b] = i;
      for (int b : p.out_blobs[i]) last_write[b] = i;
    }
    for (int b = 0; b < p.n_blobs; ++b)
      if (last_write[b] >= 0 && last_read[b] < last_write[b]) finals.insert(b);
  }
  p.final_outputs.assign(finals.begin(), finals.end());
  p.freed_after.assign(p.n_ops, {});
  for (int b = 0; b < p.n_blobs; ++b)
    if (!finals.count(b) && !p.param[b] && last_access[b] >= 0) p.freed_after[last_access[b]].push_back(b);
  FillLinks(profile, &p);
  p.caps.assign(p.n_dev, 0);
  for (int d = 0; d < p.n_dev; ++d) p.caps[d] = profile.Find(p.dev_names[d])->memory_bytes;
  p.run_overhead_us.resize(p.n_dev);
  for (int d = 0; d < p.n_dev; ++d) p.run_overhead_us[d] = profile.Find(p.dev_names[d])->run_overhead_us;
  for (const auto& [name, cap] : options.memory_caps) {
    const int d = std::find(p.dev_names.begin(), p.dev_names.end(), name) - p.dev_names.begin();
    if (d == p.n_dev) HN_THROW(kInvalidArgument, "memory cap for '", name, "', which is not a candidate device");
    if (cap <= 0) HN_THROW(kInvalidArgument, "memory cap for ", name, " must be positive, got ", cap);
    p.caps[d] = cap;
  }
  return p;
}

}  // namespace auto_placement
}  // namespace hetnet
