// AutoPlace's cost model: the net reduced to ids with per-device op times, copy costs and memory
// rules (BuildProblem), and the list-schedule simulation of one placement (Simulator).
#include <algorithm>
#include <set>
#include <tuple>

#include "core/auto_placement_model.h"
#include "core/checked_size.h"
#include "core/error.h"
#include "core/op_cost.h"
#include "core/operator.h"
#include "net_executors/dag_graph.h"

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

double ComputeUs(const DeviceCaps& caps, const OpCost& cost, double correction) {
  const auto& table = cost.kind == OpKind::kConv ? caps.conv_gflops : caps.gemm_gflops;
  const double gflops = Gflops(table, cost.flops);
  const double flop_us = gflops > 0 ? cost.flops / (gflops * 1e3) : 0;
  const double bytes = cost.bytes_read + cost.bytes_written;
  const double mem_us = caps.mem_bandwidth_gbs > 0 ? bytes / (caps.mem_bandwidth_gbs * 1e3) : 0;
  return caps.dispatch_us + std::max(flop_us, mem_us) * correction;
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
        p->latency_us[a * n + b] = l->latency_us;
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
    // Compute time and input/output devices on each candidate.
    std::vector<double> times(p.n_dev, kInf);
    std::vector<std::vector<int>> in_need(p.n_dev), out_need(p.n_dev);
    for (int d = 0; d < p.n_dev; ++d) {
      if (has_kernel(op.type(), p.devs[d]))
        times[d] = ComputeUs(*profile.Find(p.dev_names[d]), cost, profile.Correction(p.dev_names[d], op.type()));
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
  for (const auto& [name, cap] : options.memory_caps) {
    const int d = std::find(p.dev_names.begin(), p.dev_names.end(), name) - p.dev_names.begin();
    if (d == p.n_dev) HN_THROW(kInvalidArgument, "memory cap for '", name, "', which is not a candidate device");
    if (cap <= 0) HN_THROW(kInvalidArgument, "memory cap for ", name, " must be positive, got ", cap);
    p.caps[d] = cap;
  }
  return p;
}

SimState Simulator::Start() const {
  SimState s;
  const int nd = p_.n_dev;
  s.avail.assign(static_cast<size_t>(p_.n_blobs) * nd, -1.0);
  s.param_on.assign(static_cast<size_t>(p_.n_blobs) * nd, 0);
  s.op_finish.assign(p_.n_ops, 0);
  s.queue_free.assign(nd, 0);
  s.busy.assign(nd, 0);
  s.link_free.assign(nd * nd, 0);
  s.link_busy.assign(nd * nd, 0);
  s.mem_cur.assign(nd, 0);
  s.mem_peak.assign(nd, 0);
  s.weights.assign(nd, 0);
  for (int b = 0; b < p_.n_blobs; ++b)
    if (p_.home[b] >= 0) {
      s.avail[b * nd + p_.home[b]] = 0;
      s.mem_cur[p_.home[b]] += p_.bytes[b];
      s.mem_peak[p_.home[b]] = s.mem_cur[p_.home[b]];
    }
  return s;
}

double Simulator::Ensure(SimState* s, int b, int dev) const {
  const int nd = p_.n_dev;
  if (p_.param[b]) {  // loaded onto every device that reads it, before the run
    char& on = s->param_on[b * nd + dev];
    if (!on) s->weights[dev] += p_.bytes[b];
    on = 1;
    return 0;
  }
  if (s->avail[b * nd + dev] >= 0) return s->avail[b * nd + dev];
  int src = -1;
  for (int d = 0; d < nd; ++d)
    if (s->avail[b * nd + d] >= 0 && (src < 0 || s->avail[b * nd + d] < s->avail[b * nd + src])) src = d;
  if (src < 0) return 0;  // never written: net creation reports it
  const int link = src * nd + dev;
  const double start = std::max(s->avail[b * nd + src], s->link_free[link]);
  const double took = p_.CopyUs(src, dev, p_.bytes[b]);
  s->link_free[link] = start + took;
  s->link_busy[link] += took;
  s->avail[b * nd + dev] = start + took;
  s->mem_cur[dev] += p_.bytes[b];
  s->mem_peak[dev] = std::max(s->mem_peak[dev], s->mem_cur[dev]);
  return start + took;
}

void Simulator::Step(SimState* s, int dev) const {
  const int op = s->next_op++;
  const int nd = p_.n_dev;
  double start = s->queue_free[dev];
  for (int parent : p_.parents[op]) start = std::max(start, s->op_finish[parent]);
  const auto& need = p_.in_need[op][dev];
  for (size_t k = 0; k < p_.in_blobs[op].size(); ++k) start = std::max(start, Ensure(s, p_.in_blobs[op][k], need[k]));
  const double t = p_.compute_us[op][dev];
  const double finish = start + t;
  s->queue_free[dev] = finish;
  s->busy[dev] += t;
  s->op_finish[op] = finish;
  s->makespan = std::max(s->makespan, finish);
  const auto& out_need = p_.out_need[op][dev];
  for (size_t k = 0; k < p_.out_blobs[op].size(); ++k) {
    const int b = p_.out_blobs[op][k];
    const int at = out_need[k];
    for (int d = 0; d < nd; ++d)  // copies elsewhere are stale now
      if (d != at && s->avail[b * nd + d] >= 0) {
        s->avail[b * nd + d] = -1;
        s->mem_cur[d] -= p_.bytes[b];
      }
    if (s->avail[b * nd + at] < 0) {
      s->mem_cur[at] += p_.bytes[b];
      s->mem_peak[at] = std::max(s->mem_peak[at], s->mem_cur[at]);
    }
    s->avail[b * nd + at] = finish;
  }
  for (int b : p_.freed_after[op])
    for (int d = 0; d < nd; ++d)
      if (d != p_.home[b] && s->avail[b * nd + d] >= 0) {
        s->avail[b * nd + d] = -1;
        s->mem_cur[d] -= p_.bytes[b];
      }
}

Evaluation Simulator::Finish(SimState s) const {
  for (int b : p_.final_outputs) s.makespan = std::max(s.makespan, Ensure(&s, b, 0));
  Evaluation e;
  e.makespan = s.makespan;
  e.busy = s.busy;
  if (p_.throughput) {  // steady state of a pipeline: the busiest compute or copy queue
    e.cost = 0;
    for (double b : s.busy) e.cost = std::max(e.cost, b), e.secondary += b * b;
    for (double b : s.link_busy) e.cost = std::max(e.cost, b), e.secondary += b * b;
  } else {
    e.cost = s.makespan;
    for (double b : s.busy) e.secondary += b;
    for (double b : s.link_busy) e.secondary += b;
  }
  e.need.resize(p_.n_dev);
  for (int d = 0; d < p_.n_dev; ++d) {
    e.need[d] = s.weights[d] + s.mem_peak[d];
    const double over = p_.caps[d] > 0 ? e.need[d] - static_cast<double>(p_.caps[d]) : 0;
    if (over > 0 && (e.over_dev < 0 || over > e.over_bytes)) {
      e.over_dev = d;
      e.over_bytes = over;
    }
  }
  if (e.over_dev >= 0) e.cost = kInf;
  return e;
}

Evaluation Simulator::Run(const std::vector<int>& placement) const {
  SimState s = Start();
  for (int i = 0; i < p_.n_ops; ++i) Step(&s, placement[i]);
  return Finish(std::move(s));
}

double Simulator::LowerBound(const SimState& s, const std::vector<double>& min_rest_us) const {
  for (int d = 0; d < p_.n_dev; ++d)
    if (p_.caps[d] > 0 && s.weights[d] + s.mem_peak[d] > static_cast<double>(p_.caps[d])) return kInf;
  const double rest = s.next_op < p_.n_ops ? min_rest_us[s.next_op] : 0;
  double queues = rest;
  double bound = 0;
  for (int d = 0; d < p_.n_dev; ++d) {
    queues += p_.throughput ? s.busy[d] : s.queue_free[d];
    bound = std::max(bound, p_.throughput ? s.busy[d] : s.makespan);
  }
  if (p_.throughput)
    for (double b : s.link_busy) bound = std::max(bound, b);
  // Every remaining op joins some queue after what that queue already holds.
  return std::max(bound, queues / p_.n_dev);
}

}  // namespace auto_placement
}  // namespace hetnet
