// Helpers of the AutoPlace tests: nets of FC/Relu/Add built in code, a synthetic CPU + GPU
// profile, and the brute-force optimum through the public API (every op pinned, each placement).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/auto_placement.h"
#include "core/error.h"

namespace auto_placement_test {

using namespace hetnet;

inline caffe2::OperatorDef* Op(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                               std::vector<std::string> out) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  return op;
}

// FC from `x` (width k) to `y` (width m); its weights join `shapes` (batch n is in x's shape).
inline void AddFC(caffe2::NetDef* net, std::map<std::string, TensorInfo>* shapes, const std::string& x,
                  const std::string& y, int64_t k, int64_t m) {
  Op(net, "FC", {x, y + "_w", y + "_b"}, {y});
  (*shapes)[y + "_w"] = TensorInfo::Of({m, k}, DataType::Float);
  (*shapes)[y + "_b"] = TensorInfo::Of({m}, DataType::Float);
}

// A CPU of 50 GFLOPS and a GPU of 20 TFLOPS (small shapes far slower, launches dearer) over a
// 10 GB/s, 10 us link.
inline DeviceProfile SyntheticProfile(int gpus = 1) {
  DeviceProfile p;
  p.machine = "synthetic test machine";
  p.source = "written by the test";
  DeviceCaps cpu;
  cpu.name = "cpu";
  cpu.gemm_gflops = {{"small", 5}, {"medium", 50}, {"large", 50}};
  cpu.conv_gflops = cpu.gemm_gflops;
  cpu.mem_bandwidth_gbs = 20;
  cpu.dispatch_us = 1;
  p.devices.push_back(cpu);
  for (int g = 0; g < gpus; ++g) {
    DeviceCaps gpu;
    gpu.name = "cuda:" + std::to_string(g);
    gpu.gemm_gflops = {{"small", 50}, {"medium", 5000}, {"large", 20000}};
    gpu.conv_gflops = gpu.gemm_gflops;
    gpu.mem_bandwidth_gbs = 1000;
    gpu.dispatch_us = 8;
    p.devices.push_back(gpu);
    p.links.push_back({"cpu", gpu.name, true, 10, 10});
    p.links.push_back({gpu.name, "cpu", true, 10, 10});
  }
  return p;
}

// The best objective over every placement of every op (each pinned in turn); infeasible ones
// (over a cap) skipped. Returns +inf when none fits.
inline double BruteForce(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& shapes,
                         const DeviceProfile& profile, AutoPlacementOptions options) {
  std::vector<Device> devs{Device::CPU()};
  for (const auto& d : profile.devices)
    if (d.name != "cpu") devs.push_back(ParseDeviceList({d.name}).front());
  const int n = net.op_size(), nd = static_cast<int>(devs.size());
  double best = INFINITY;
  std::vector<int> x(n, 0);
  options.override_pinned = false;
  for (;;) {
    caffe2::NetDef pinned = net;
    bool allowed = true;
    for (int i = 0; i < n; ++i) {
      DeviceToOption(devs[x[i]], pinned.mutable_op(i)->mutable_device_option());
      if (options.has_kernel && !options.has_kernel(net.op(i).type(), devs[x[i]])) allowed = false;
    }
    if (allowed) {
      try {
        best = std::min(best, AutoPlace(pinned, shapes, profile, options).objective_us);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInvalidArgument) throw;  // over a cap
      }
    }
    int k = 0;
    while (k < n && ++x[k] == nd) x[k++] = 0;
    if (k == n) break;
  }
  return best;
}

inline int OnDevice(const AutoPlacementResult& r, const std::string& device) {
  int count = 0;
  for (const auto& op : r.ops) count += op.chosen == device;
  return count;
}

}  // namespace auto_placement_test
