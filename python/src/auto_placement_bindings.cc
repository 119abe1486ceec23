// Cost-based automatic placement (core/auto_placement.h) for workspace.AutoPlace.
#include <pybind11/stl.h>

#include <algorithm>

#include "bindings.h"
#include "core/auto_placement.h"
#include "core/measured_op_costs.h"
#include "core/net.h"
#include "core/placement.h"
#include "core/profiler.h"
#include "core/run_guard.h"
#include "core/run_time_calibration.h"
#include "core/workspace.h"

namespace hetnet_python {

namespace {

py::dict ResultToDict(const hetnet::AutoPlacementResult& r) {
  py::list ops;
  for (const auto& op : r.ops) {
    py::dict d;
    d["op"] = op.op;
    d["type"] = op.type;
    d["predicted_us"] = op.predicted_us;
    d["chosen"] = op.chosen;
    d["pinned"] = op.pinned;
    d["why"] = op.why;
    ops.append(d);
  }
  py::dict out;
  out["net_name"] = r.net.name();
  out["text"] = r.ToText();
  out["ops"] = ops;
  out["predicted_us"] = r.predicted_us;
  out["objective"] = r.objective;
  out["objective_us"] = r.objective_us;
  out["baselines_us"] = r.baselines_us;
  out["peak_bytes"] = r.peak_bytes;
  out["caps"] = r.caps;
  out["busy_us"] = r.busy_us;
  out["exact"] = r.exact;
  out["planner_ms"] = r.planner_ms;
  out["placements_evaluated"] = r.placements_evaluated;
  out["profile_source"] = r.profile_source;
  return out;
}

// profile: a JSON text, "" for $HETNET_DEVICE_PROFILE or else the built-in profile of this machine.
hetnet::DeviceProfile ProfileArg(const std::string& profile_json) {
  if (!profile_json.empty()) return hetnet::DeviceProfile::FromJson(profile_json, "the profile argument");
  return hetnet::ProfileFromEnvironment(hetnet::NumCudaDevices());
}

// The data inputs of `net` and, from `ws` (null: none), where they live and the shapes of the
// blobs it holds: what workspace.AutoPlace and the run-time fit of MeasureOpCosts plan with.
void PlanInputs(const caffe2::NetDef& net, const hetnet::Workspace* ws, const std::vector<std::string>& data_inputs,
                hetnet::AutoPlacementOptions* options, std::map<std::string, hetnet::TensorInfo>* shapes) {
  options->data_inputs.insert(data_inputs.begin(), data_inputs.end());
  if (!ws) return;
  std::map<std::string, hetnet::Device> input_devices;
  hetnet::ExternalInputsFromWorkspace(net, *ws, &input_devices, shapes);
  for (const auto& name : data_inputs) {
    auto d = input_devices.find(name);
    if (d != input_devices.end()) options->input_devices[name] = d->second;
  }
}

// AutoPlace of a serialized net with the Python arguments of workspace.AutoPlace.
hetnet::AutoPlacementResult Plan(const py::bytes& net_bytes, const std::vector<std::string>& devices,
                                 const std::string& objective, const std::map<std::string, int64_t>& memory_caps,
                                 const std::map<std::string, std::pair<std::vector<int64_t>, int>>& shapes,
                                 const std::string& profile_json, bool override_pinned, int exact_limit,
                                 const std::vector<std::string>& data_inputs, bool from_workspace,
                                 double min_mixed_gain = hetnet::AutoPlacementOptions().min_mixed_gain) {
  auto net = ParseProto<caffe2::NetDef>(net_bytes, "NetDef");
  const hetnet::DeviceProfile profile = ProfileArg(profile_json);
  hetnet::AutoPlacementOptions options;
  options.devices = hetnet::ParseDeviceList(devices);
  if (objective == "throughput") options.objective = hetnet::AutoPlacementOptions::Objective::kThroughput;
  else if (objective != "latency")
    HN_THROW(kInvalidArgument, "objective must be \"latency\" or \"throughput\", got \"", objective, "\"");
  options.memory_caps = memory_caps;
  options.override_pinned = override_pinned;
  options.exact_limit = exact_limit;
  options.min_mixed_gain = min_mixed_gain;
  std::map<std::string, hetnet::TensorInfo> input_shapes;
  PlanInputs(net, from_workspace ? CurrentWorkspace() : nullptr, data_inputs, &options, &input_shapes);
  for (const auto& [name, info] : shapes)
    input_shapes[name] = hetnet::TensorInfo::Of(info.first, static_cast<hetnet::DataType>(info.second));
  return hetnet::AutoPlace(net, input_shapes, profile, options);
}

py::dict ComparisonToDict(const hetnet::PredictedVsMeasured& c) {
  py::list ops;
  for (const auto& row : c.ops) {
    py::dict d;
    d["op"] = row.op;
    d["type"] = row.type;
    d["device"] = row.device;
    d["predicted_us"] = row.predicted_us;
    d["measured_us"] = row.measured_us >= 0 ? py::object(py::float_(row.measured_us)) : py::object(py::none());
    ops.append(d);
  }
  py::dict out;
  out["text"] = c.ToText();
  out["ops"] = ops;
  out["predicted_total_us"] = c.predicted_total_us;
  out["measured_wall_us"] = c.measured_wall_us;
  out["measured_copy_us"] = c.measured_copy_us;
  return out;
}

}  // namespace

void InitAutoPlacement(py::module_& m) {
  // profile: a JSON text, "" for $HETNET_DEVICE_PROFILE or else the built-in profile of this
  // machine. shapes: {blob: (dims, TensorProto dtype)} over what the current workspace holds
  // (when from_workspace). Returns (placed net bytes, report dict).
  m.def("auto_place", [](const py::bytes& net_bytes, const std::vector<std::string>& devices,
                         const std::string& objective, const std::map<std::string, int64_t>& memory_caps,
                         const std::map<std::string, std::pair<std::vector<int64_t>, int>>& shapes,
                         const std::string& profile_json, bool override_pinned, int exact_limit,
                         const std::vector<std::string>& data_inputs, bool from_workspace, double min_mixed_gain) {
    auto result = Plan(net_bytes, devices, objective, memory_caps, shapes, profile_json, override_pinned, exact_limit,
                       data_inputs, from_workspace, min_mixed_gain);
    return py::make_tuple(SerializeProto(result.net), ResultToDict(result));
  });
  // Plans net (latency objective, shapes from the workspace), creates the placed net under a name of
  // its own, profiles `runs` runs after `warmup` and compares the last one with the prediction.
  m.def("compare_prediction", [](const py::bytes& net_bytes, const std::vector<std::string>& devices,
                                 const std::string& profile_json, const std::vector<std::string>& data_inputs,
                                 int warmup, int runs) {
    HN_ENFORCE(runs > 0 && warmup >= 0, "ComparePrediction: runs must be > 0 and warmup >= 0 (got ", runs, ", ",
               warmup, ")");
    auto result = Plan(net_bytes, devices, "latency", {}, {}, profile_json, false, 14, data_inputs, true);
    hetnet::Workspace* ws = CurrentWorkspace();
    result.net.set_name(result.net.name() + "_compare_prediction");
    hetnet::NetBase* net = ws->CreateNet(result.net, true);
    hetnet::PredictedVsMeasured cmp;
    try {
      hetnet::RunGuard guard(ws, net);
      py::gil_scoped_release release;
      const hetnet::ProfileResult r = hetnet::ProfileNet(net, warmup, runs, true);
      cmp = hetnet::ComparePrediction(result, r.runs.back());
    } catch (...) {
      ws->DeleteNet(result.net.name());
      throw;
    }
    ws->DeleteNet(result.net.name());
    py::dict out = ComparisonToDict(cmp);
    out["report"] = ResultToDict(result);
    return out;
  });
  // Profiles `runs` runs of the created net `name` (after `warmup`) and returns the profile's JSON
  // with every operator's median time recorded (core/measured_op_costs.h), how many, and, given
  // the net as it was created (`placed`, serialized; empty: none), the fit of its times to its
  // plain run time (core/run_time_calibration.h) as a dict.
  m.def("measure_op_costs", [](const std::string& name, const std::string& profile_json, int warmup, int runs,
                               const py::bytes& placed_bytes, const std::vector<std::string>& data_inputs) {
    HN_ENFORCE(runs > 0 && warmup >= 0, "MeasureOpCosts: runs must be > 0 and warmup >= 0 (got ", runs, ", ",
               warmup, ")");
    hetnet::Workspace* ws = CurrentWorkspace();
    hetnet::NetBase* net = ws->GetNet(name);
    HN_CHECK_KIND(kNotFound, net, "net '", name, "' does not exist in the workspace");
    hetnet::DeviceProfile profile = ProfileArg(profile_json);
    const bool fit_run_time = py::len(placed_bytes) > 0;
    caffe2::NetDef placed;
    if (fit_run_time) placed = ParseProto<caffe2::NetDef>(placed_bytes, "NetDef");
    int written = 0;
    hetnet::RunTimeCalibration fit;
    {
      hetnet::RunGuard guard(ws, net);
      py::gil_scoped_release release;
      const hetnet::ProfileResult r = hetnet::ProfileNet(net, warmup, runs, true);
      // Profiling slows small ops down: scale to the unprofiled wall time (never up).
      const double profiled_ms = r.summary.MeanWallMs();
      const double scale = profiled_ms > 0 && r.unprofiled_ms_per_run > 0
                               ? std::min(1.0, std::max(0.1, r.unprofiled_ms_per_run / profiled_ms))
                               : 1.0;
      std::set<std::string> keys;
      written = hetnet::RecordMeasuredOps(&profile, *net, *ws, r.runs, scale, &keys);
      if (fit_run_time) {  // planned as workspace.AutoPlace plans: shapes and data devices from here
        hetnet::AutoPlacementOptions options;
        std::map<std::string, hetnet::TensorInfo> shapes;
        PlanInputs(placed, ws, data_inputs, &options, &shapes);
        fit = hetnet::CalibrateToRunTime(&profile, placed, shapes, options, keys,
                                         hetnet::MedianRunUs(net, *ws, std::max(runs, 10)));
      }
    }
    py::dict calibration;
    calibration["device"] = fit.device;
    calibration["scale"] = fit.scale;
    calibration["predicted_us"] = fit.predicted_us;
    calibration["calibrated_us"] = fit.calibrated_us;
    calibration["measured_us"] = fit.measured_us;
    calibration["entries"] = fit.entries;
    calibration["note"] = fit.note;
    return py::make_tuple(profile.ToJson(), written, calibration);
  });
  m.def("fallback_device_profile", [](int gpus) { return hetnet::BuiltinFallbackProfile(gpus).ToJson(); });
}

}  // namespace hetnet_python
