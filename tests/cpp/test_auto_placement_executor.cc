// AutoPlace's cost model follows the executor that will run the net: the sequential one issues a
// copy in net order on the GPU's compute stream (behind the GPU work issued before it) and holds
// the host until a copy to the CPU lands; the DAG executor starts a copy as soon as its value is
// ready. The H200 proof of 2026-11-27 (benchmarks/RESULTS.md) measured a plan that moved ResNet-18's
// projection convolutions to the CPU 42% slower than all-GPU: the model had overlapped that CPU work
// with the GPU's main branch, which a sequential net never does.
#include <catch2/catch.hpp>

#include "core/net_type.h"
#include "core/op_cost.h"
#include "test_auto_placement_util.h"

using namespace hetnet;
using namespace auto_placement_test;

namespace {

// Sets the measured time of net.op(i) on `device` in `profile` (shapes: the net's inputs; the
// outputs' shapes are what the test declares in `out`).
void Measure(DeviceProfile* profile, const caffe2::NetDef& net, int i, std::map<std::string, TensorInfo>* shapes,
             const std::string& device, double us) {
  std::vector<TensorInfo> in;
  for (const auto& name : net.op(i).input()) in.push_back(shapes->at(name));
  profile->measured_op_us[device + "|" + OpSignature(net.op(i), in)] = us;
}

// x -> a = FC(x) -> b = FC(a) (the long main branch) ; c = Relu(a) (a side branch) ; y = Add(b, c).
// Measured: the FCs and the Add are far faster on the GPU; the side branch costs 30 us on the GPU
// and 20 us on the CPU, with 10 us copies each way.
caffe2::NetDef SideBranch(const std::string& type, DeviceProfile* profile, std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("side_branch");
  net.set_type(type);
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({1, 64}, DataType::Float);
  AddFC(&net, shapes, "x", "a", 64, 64);
  (*shapes)["a"] = TensorInfo::Of({1, 64}, DataType::Float);
  AddFC(&net, shapes, "a", "b", 64, 64);
  (*shapes)["b"] = TensorInfo::Of({1, 64}, DataType::Float);
  Op(&net, "Relu", {"a"}, {"c"});
  (*shapes)["c"] = TensorInfo::Of({1, 64}, DataType::Float);
  Op(&net, "Add", {"b", "c"}, {"y"});
  net.add_external_output("y");
  // Both FCs have one signature; one time each way.
  Measure(profile, net, 0, shapes, "cuda:0", 50);
  Measure(profile, net, 0, shapes, "cpu", 5000);
  Measure(profile, net, 2, shapes, "cuda:0", 30);
  Measure(profile, net, 2, shapes, "cpu", 20);
  Measure(profile, net, 3, shapes, "cuda:0", 5);
  Measure(profile, net, 3, shapes, "cpu", 1000);
  for (const auto& name : {"a", "b", "c"}) shapes->erase(name);  // the planner infers them
  return net;
}

DeviceProfile FlatLinks() {
  DeviceProfile p = SyntheticProfile();
  for (auto& d : p.devices) d.run_overhead_us = 0;
  for (auto& l : p.links) l.latency_us = 10;  // 256-byte values: the latency is the copy
  return p;
}

caffe2::NetDef Pinned(caffe2::NetDef net, const std::vector<Device>& devices) {
  for (int i = 0; i < net.op_size(); ++i) DeviceToOption(devices[i], net.mutable_op(i)->mutable_device_option());
  return net;
}

}  // namespace

TEST_CASE("auto placement: a sequential net's copy to the CPU waits for the GPU work issued before it",
          "[auto_placement]") {
  const Device gpu = Device::CUDA(0), cpu = Device::CPU();
  const std::vector<Device> side_on_cpu{gpu, gpu, cpu, gpu}, all_gpu{gpu, gpu, gpu, gpu};
  AutoPlacementOptions options;
  options.min_mixed_gain = 0;
  std::map<std::string, double> mixed_us, gpu_us;
  for (const std::string type : {"", "simple", "dag", "async_scheduling"}) {
    DeviceProfile profile = FlatLinks();
    std::map<std::string, TensorInfo> shapes;
    const caffe2::NetDef net = SideBranch(type, &profile, &shapes);
    INFO("net type '" << type << "'");
    mixed_us[type] = AutoPlace(Pinned(net, side_on_cpu), shapes, profile, options).predicted_us;
    gpu_us[type] = AutoPlace(Pinned(net, all_gpu), shapes, profile, options).predicted_us;
    const auto r = AutoPlace(net, shapes, profile, options);
    REQUIRE(r.exact);
    CHECK(r.predicted_us == Approx(std::min(mixed_us[type], gpu_us[type])).epsilon(1e-9));
    // The DAG executor overlaps the CPU branch with b; the sequential one cannot, so there the
    // side branch stays on the GPU.
    CHECK(r.ops[2].chosen == (IsParallelNetType(type) ? "cpu" : "cuda:0"));
    CHECK(r.ops[2].why.find(" vs ") != std::string::npos);
  }
  // One device: the executors do not differ (x in, y out: the copies wait for nothing else).
  CHECK(gpu_us[""] == Approx(gpu_us["dag"]).epsilon(1e-9));
  CHECK(gpu_us["simple"] == Approx(gpu_us[""]).epsilon(1e-9));
  // By hand (copies of these 256-byte values take their 10 us latency), sequential: x in 0-10;
  // a 10-60, b 60-110 issued; a's copy to the CPU waits for b: 110-120; c 120-140; back 140-150; Add
  // 150-155; y out 155-165. DAG: a's copy 60-70, c 70-90 and back 90-100 beside b; Add 110-115; y
  // out 115-125. All on the GPU: x in, a, b, c (30), Add, y out: 155 with either executor.
  CHECK(mixed_us[""] == Approx(165).margin(0.5));
  CHECK(mixed_us["dag"] == Approx(125).margin(0.5));
  CHECK(gpu_us[""] == Approx(155).margin(0.5));
}
