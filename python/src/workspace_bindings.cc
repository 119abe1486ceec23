// Named workspaces (Caffe2's SwitchWorkspace model), blobs, nets, and a per-operator benchmark.
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>

#include "bindings.h"
#include "core/net.h"
#include "core/profiler.h"
#include "core/run_guard.h"

namespace hetnet_python {

using hetnet::Workspace;

namespace {

struct WorkspaceRegistry {
  std::map<std::string, std::unique_ptr<Workspace>> all;
  std::string current = "default";
  WorkspaceRegistry() { all["default"] = std::make_unique<Workspace>(); }
};

WorkspaceRegistry& Registry() {
  static WorkspaceRegistry* r = new WorkspaceRegistry();  // never destroyed: blobs may outlive exit order
  return *r;
}

void SwitchWorkspace(const std::string& name, bool create_if_missing) {
  auto& r = Registry();
  if (!r.all.count(name)) {
    if (!create_if_missing)
      HN_THROW(kNotFound, "workspace '", name, "' does not exist (pass create_if_missing=True to create it)");
    r.all[name] = std::make_unique<Workspace>();
  }
  r.current = name;
}

// Refused (RuntimeError) while another thread runs a net in the workspace.
void ResetWorkspace() {
  auto& r = Registry();
  hetnet::RefuseWhileRunning(r.all[r.current].get(), "cannot reset workspace '" + r.current + "'");
  r.all[r.current] = std::make_unique<Workspace>();
}

std::vector<std::string> Workspaces() {
  std::vector<std::string> out;
  for (const auto& kv : Registry().all) out.push_back(kv.first);
  return out;
}

double MillisecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Caffe2's benchmark_net result: [ms per whole-net run, then (when per_op) ms per operator in order].
// Per-op times come from the C++ profiler (core/profiler.h): host clock on CPU, events on GPU.
std::vector<double> BenchmarkNet(const std::string& name, int warmup, int iters, bool per_op) {
  Workspace* ws = CurrentWorkspace();
  hetnet::NetBase* net = ws->GetNet(name);
  HN_CHECK_KIND(kNotFound, net, "net '", name, "' does not exist in the workspace");
  HN_ENFORCE(iters > 0, "BenchmarkNet needs at least one main run");
  hetnet::RunGuard guard(ws, net);  // delete_net / reset_workspace on another thread are refused
  if (!per_op) {
    py::gil_scoped_release release;
    for (int i = 0; i < warmup; ++i) net->Run();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) net->Run();
    return {MillisecondsSince(t0) / iters};
  }
  hetnet::ProfileResult r;
  {
    py::gil_scoped_release release;
    r = hetnet::ProfileNet(net, warmup, iters, false);
  }
  py::print(r.summary.ToMarkdown());
  std::vector<double> out{r.unprofiled_ms_per_run};
  for (double ms : r.summary.MeanOpMs()) out.push_back(ms);
  return out;
}

// The profiler's summary of `iters` profiled runs (after `warmup`); writes a Chrome trace when asked.
py::dict ProfileNet(const std::string& name, int warmup, int iters, const std::string& trace_file) {
  Workspace* ws = CurrentWorkspace();
  hetnet::NetBase* net = ws->GetNet(name);
  HN_CHECK_KIND(kNotFound, net, "net '", name, "' does not exist in the workspace");
  hetnet::RunGuard guard(ws, net);
  hetnet::ProfileResult r;
  {
    py::gil_scoped_release release;
    r = hetnet::ProfileNet(net, warmup, iters, !trace_file.empty());
    if (!trace_file.empty()) hetnet::WriteChromeTrace(trace_file, r.runs);
  }
  py::dict d;
  d["text"] = r.summary.ToMarkdown();
  d["type_ms"] = r.summary.MeanTypeMs();
  d["op_ms"] = r.summary.MeanOpMs();
  d["copy_share"] = r.summary.CopyShare();
  d["wall_ms"] = r.summary.MeanWallMs();
  d["unprofiled_ms"] = r.unprofiled_ms_per_run;
  return d;
}

}  // namespace

Workspace* CurrentWorkspace() {
  auto& r = Registry();
  return r.all.at(r.current).get();
}

void InitWorkspaces(py::module_& m) {
  m.def("switch_workspace", &SwitchWorkspace, py::arg("name"), py::arg("create_if_missing") = false);
  m.def("current_workspace", [] { return Registry().current; });
  m.def("workspaces", &Workspaces);
  m.def("reset_workspace", &ResetWorkspace);
  m.def("blobs", [] { return CurrentWorkspace()->Blobs(); });
  m.def("has_blob", [](const std::string& n) { return CurrentWorkspace()->HasBlob(n); });
  m.def("remove_blob", [](const std::string& n) { return CurrentWorkspace()->RemoveBlob(n); });
  m.def("create_blob", [](const std::string& n) { CurrentWorkspace()->CreateBlob(n); });
  m.def("nets", [] { return CurrentWorkspace()->Nets(); });
  m.def("create_net", [](const py::bytes& def, bool overwrite) {
    auto net = ParseProto<caffe2::NetDef>(def, "NetDef");
    Workspace* ws = CurrentWorkspace();
    hetnet::RunGuard guard(ws, nullptr);  // creation reads and creates blobs of ws
    py::gil_scoped_release release;
    return ws->CreateNet(net, overwrite)->name();
  }, py::arg("net_def"), py::arg("overwrite") = false);
  m.def("run_net", [](const std::string& name, int num_iter) {
    Workspace* ws = CurrentWorkspace();
    hetnet::NetBase* net = ws->GetNet(name);
    HN_CHECK_KIND(kNotFound, net, "net '", name, "' does not exist in the workspace");
    // Registered before the GIL is released and for every iteration: reset_workspace and
    // delete_net on other threads are refused until the last run returns.
    hetnet::RunGuard guard(ws, net);
    py::gil_scoped_release release;
    for (int i = 0; i < num_iter; ++i) ws->RunNet(name);
  }, py::arg("name"), py::arg("num_iter") = 1);
  m.def("run_net_once", [](const py::bytes& def) {
    auto net = ParseProto<caffe2::NetDef>(def, "NetDef");
    Workspace* ws = CurrentWorkspace();
    hetnet::RunGuard guard(ws, nullptr);
    py::gil_scoped_release release;
    ws->RunNetOnce(net);
  });
  m.def("run_operator_once", [](const py::bytes& def) {
    auto op = ParseProto<caffe2::OperatorDef>(def, "OperatorDef");
    Workspace* ws = CurrentWorkspace();
    hetnet::RunGuard guard(ws, nullptr);
    py::gil_scoped_release release;
    ws->RunOperatorOnce(op);
  });
  m.def("delete_net", [](const std::string& name) { CurrentWorkspace()->DeleteNet(name); });
  // Runs in flight in the current workspace (run_net, run_net_once, ... on other threads).
  m.def("runs_in_flight", [] { return hetnet::RunsInFlight(CurrentWorkspace()); });
  // The net as it runs (device options resolved, copies inserted), serialized.
  m.def("net_def", [](const std::string& name) {
    hetnet::NetBase* net = CurrentWorkspace()->GetNet(name);
    HN_CHECK_KIND(kNotFound, net, "net '", name, "' does not exist in the workspace");
    return SerializeProto(net->def());
  });
  m.def("benchmark_net", &BenchmarkNet, py::arg("name"), py::arg("warmup_runs"), py::arg("main_runs"),
        py::arg("run_individual"));
  m.def("profile_net", &ProfileNet, py::arg("name"), py::arg("warmup_runs"), py::arg("main_runs"),
        py::arg("trace_file") = "");
}

}  // namespace hetnet_python
