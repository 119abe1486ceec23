// Measured operator times in the placement cost model (core/measured_op_costs.h): op signatures,
// the profile's measured_ops field, the planner preferring measured times over its estimate, the
// per-run overheads, and recording a profiled run of a real net.
#include <catch2/catch.hpp>

#include "core/measured_op_costs.h"
#include "core/net.h"
#include "core/op_cost.h"
#include "core/profiler.h"
#include "core/workspace.h"
#include "test_auto_placement_util.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace auto_placement_test;

namespace {

// Two 2048-wide FCs at batch 64: the synthetic profile's GPU wins them by far.
caffe2::NetDef BigNet(std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("big");
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({64, 2048}, DataType::Float);
  AddFC(&net, shapes, "x", "h", 2048, 2048);
  AddFC(&net, shapes, "h", "y", 2048, 2048);
  return net;
}

std::vector<TensorInfo> FcInputs(int64_t batch) {
  return {TensorInfo::Of({batch, 2048}, DataType::Float), TensorInfo::Of({2048, 2048}, DataType::Float),
          TensorInfo::Of({2048}, DataType::Float)};
}

}  // namespace

TEST_CASE("OpSignature: type, engine, input dtypes and shapes, sorted arguments; never blob names",
          "[auto_placement][measured]") {
  caffe2::OperatorDef a;
  a.set_type("Conv");
  a.add_input("x");
  a.add_input("w");
  *a.add_arg() = optest::ArgI("pad", 1);
  *a.add_arg() = optest::ArgI("kernel", 3);
  const std::vector<TensorInfo> in{TensorInfo::Of({1, 3, 8, 8}, DataType::Float),
                                   TensorInfo::Of({4, 3, 3, 3}, DataType::Float)};
  const std::string sig = OpSignature(a, in);
  CHECK(sig.rfind("Conv(float32[1,3,8,8],float32[4,3,3,3]){", 0) == 0);
  CHECK(sig.find("kernel") < sig.find("pad"));  // sorted by name, not by position

  caffe2::OperatorDef b = a;  // other blob names, arguments in the other order: the same work
  b.set_input(0, "other_x");
  b.clear_arg();
  *b.add_arg() = optest::ArgI("kernel", 3);
  *b.add_arg() = optest::ArgI("pad", 1);
  CHECK(OpSignature(b, in) == sig);

  b.set_engine("CUDNN");
  CHECK(OpSignature(b, in) != sig);
  CHECK(OpSignature(a, {in[0], TensorInfo::Of({4, 3, 3, 3}, DataType::Float16)}) != sig);
  CHECK(OpSignature(a, {TensorInfo::Of({2, 3, 8, 8}, DataType::Float), in[1]}) != sig);
  CHECK(OpSignature(a, {in[0], TensorInfo::Unknown()}).empty());
}

TEST_CASE("measured op times replace the estimate and can flip the choice; the profile keeps them",
          "[auto_placement][measured]") {
  std::map<std::string, TensorInfo> shapes;
  const auto net = BigNet(&shapes);
  DeviceProfile profile = SyntheticProfile();
  REQUIRE(OnDevice(AutoPlace(net, shapes, profile), "cuda:0") == 2);

  // Measured: the GPU's FCs of these shapes take 50 ms, the CPU's 3 ms.
  const std::string sig = OpSignature(net.op(0), FcInputs(64));
  REQUIRE(OpSignature(net.op(1), FcInputs(64)) == sig);
  profile.measured_op_us["cuda:0|" + sig] = 50000;
  profile.measured_op_us["cpu|" + sig] = 3000;
  const auto r = AutoPlace(net, shapes, profile);
  CHECK(OnDevice(r, "cpu") == 2);
  CHECK(r.ops[0].predicted_us.at("cuda:0") == 50000);
  CHECK(r.ops[1].predicted_us.at("cpu") == 3000);
  CHECK(r.predicted_us == Approx(6000));

  const DeviceProfile again = DeviceProfile::FromJson(profile.ToJson());
  CHECK(again.MeasuredUs("cuda:0", sig) == 50000);
  CHECK(again.MeasuredUs("cpu", "FC(other)") == -1);
  auto bad = [](const std::string& key) {
    return "{\"devices\": [{\"name\": \"cpu\"}], \"measured_ops\": {\"" + key + "\": 1}}";
  };
  CHECK_THROWS_WITH(DeviceProfile::FromJson(bad("cpuFC()")), Catch::Contains("<device>|<op signature>"));
  CHECK_THROWS_WITH(DeviceProfile::FromJson(bad("|FC()")), Catch::Contains("measured_ops"));
  CHECK_THROWS_WITH(DeviceProfile::FromJson("{\"devices\": [{\"name\": \"cpu\"}], \"measured_ops\": {\"cpu|FC\": -1}}"),
                    Catch::Contains(">= 0"));
}

TEST_CASE("run overheads: the CPU's once per run, each GPU's once per run that uses it",
          "[auto_placement][measured]") {
  std::map<std::string, TensorInfo> shapes;
  const auto net = BigNet(&shapes);
  DeviceProfile profile = SyntheticProfile();
  const auto base = AutoPlace(net, shapes, profile);
  REQUIRE(OnDevice(base, "cuda:0") == 2);
  profile.devices[0].run_overhead_us = 3;
  profile.devices[1].run_overhead_us = 20;
  const auto r = AutoPlace(net, shapes, profile);
  CHECK(r.predicted_us == Approx(base.predicted_us + 23));
  CHECK(r.baselines_us.at("all cpu") == Approx(base.baselines_us.at("all cpu") + 3));
  CHECK(DeviceProfile::FromJson(profile.ToJson()).devices[1].run_overhead_us == 20);
}

TEST_CASE("RecordMeasuredOps: a profiled run's medians under each op's signature, which AutoPlace then predicts",
          "[auto_placement][measured]") {
  Workspace ws;
  caffe2::NetDef net;
  net.set_name("measured");
  net.add_external_input("x");
  std::map<std::string, TensorInfo> shapes;
  shapes["x"] = TensorInfo::Of({4, 32}, DataType::Float);
  AddFC(&net, &shapes, "x", "h", 32, 16);
  Op(&net, "Relu", {"h"}, {"r"});
  AddFC(&net, &shapes, "r", "y", 16, 8);
  for (const auto& [name, info] : shapes) {
    Tensor* t = ws.CreateBlob(name)->GetMutableTensor(Device::CPU());
    t->Resize(info.dims);
    for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = 0.01f * static_cast<float>(i % 5);
  }
  NetBase* created = ws.CreateNet(net);
  const ProfileResult runs = ProfileNet(created, 1, 5, true);
  REQUIRE(runs.runs.size() == 5);
  DeviceProfile profile = BuiltinFallbackProfile(0);
  CHECK(RecordMeasuredOps(&profile, *created, ws, runs.runs) == 3);
  CHECK(profile.measured_op_us.size() == 3);
  for (const auto& [key, us] : profile.measured_op_us) {
    CHECK(key.rfind("cpu|", 0) == 0);
    CHECK(us >= 0);
  }
  const auto r = AutoPlace(net, shapes, profile);
  const std::string relu = "cpu|" + OpSignature(net.op(1), {TensorInfo::Of({4, 16}, DataType::Float)});
  REQUIRE(profile.measured_op_us.count(relu));
  CHECK(r.ops[1].predicted_us.at("cpu") == profile.measured_op_us.at(relu));

  // Scaled (the profiled run's overhead taken out): every entry by the factor.
  DeviceProfile scaled = BuiltinFallbackProfile(0);
  CHECK(RecordMeasuredOps(&scaled, *created, ws, runs.runs, 0.5) == 3);
  for (const auto& [key, us] : profile.measured_op_us) CHECK(scaled.measured_op_us.at(key) == Approx(0.5 * us));
  CHECK_THROWS_WITH(RecordMeasuredOps(&scaled, *created, ws, runs.runs, 0), Catch::Contains("time_scale"));

  RunProfile wrong = runs.runs[0];
  wrong.op_types.pop_back();
  CHECK_THROWS_WITH(RecordMeasuredOps(&profile, *created, ws, {wrong}), Catch::Contains("has 2 ops"));
}

TEST_CASE("measured copy latency replaces the link's latency in the plan; the profile keeps it",
          "[auto_placement][measured]") {
  // One small FC at batch 1 whose input lives on the CPU: on the GPU it pays a copy each way.
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net;
  net.set_name("small");
  net.add_external_input("x");
  shapes["x"] = TensorInfo::Of({1, 256}, DataType::Float);
  AddFC(&net, &shapes, "x", "y", 256, 256);
  DeviceProfile profile = SyntheticProfile();
  profile.devices[0].gemm_gflops = {{"small", 1}, {"medium", 1}, {"large", 1}};  // a slow CPU: the GPU wins
  AutoPlacementOptions exact;
  exact.min_mixed_gain = 0;
  const auto base = AutoPlace(net, shapes, profile, exact);
  REQUIRE(OnDevice(base, "cuda:0") == 1);
  // Both directions measured 100 us above the link's 10: the GPU run costs 180 us more, and the CPU wins.
  profile.measured_copy_latency_us["cpu->cuda:0"] = 110;
  profile.measured_copy_latency_us["cuda:0->cpu"] = 110;
  const auto slow = AutoPlace(net, shapes, profile, exact);
  CHECK(slow.baselines_us.at("all cuda:0") == Approx(base.baselines_us.at("all cuda:0") + 200));
  CHECK(OnDevice(slow, "cpu") == 1);

  const DeviceProfile again = DeviceProfile::FromJson(profile.ToJson());
  CHECK(again.measured_copy_latency_us == profile.measured_copy_latency_us);
  auto bad = [](const std::string& entry) {
    return "{\"devices\": [{\"name\": \"cpu\"}], \"measured_copy_latency_us\": {" + entry + "}}";
  };
  CHECK_THROWS_WITH(DeviceProfile::FromJson(bad("\"cpu-cuda:0\": 1")), Catch::Contains("<from device>-><to device>"));
  CHECK_THROWS_WITH(DeviceProfile::FromJson(bad("\"->cuda:0\": 1")), Catch::Contains("measured_copy_latency_us"));
  CHECK_THROWS_WITH(DeviceProfile::FromJson(bad("\"cpu->cuda:0\": -2")), Catch::Contains(">= 0"));
}

TEST_CASE("GPU: RecordMeasuredOps keeps each copy direction's time beyond its bytes", "[gpu][auto_placement][measured]") {
  if (optest::SkipWithoutGpu()) return;
  Workspace ws;
  caffe2::NetDef net;
  net.set_name("copies");
  net.add_external_input("x");
  std::map<std::string, TensorInfo> shapes;
  shapes["x"] = TensorInfo::Of({8, 64}, DataType::Float);
  AddFC(&net, &shapes, "x", "h", 64, 64);
  Op(&net, "Relu", {"h"}, {"y"});
  DeviceToOption(Device::CUDA(0), net.mutable_op(0)->mutable_device_option());  // FC on the GPU, Relu on the CPU
  for (const auto& [name, info] : shapes) {
    Tensor* t = ws.CreateBlob(name)->GetMutableTensor(Device::CPU());
    t->Resize(info.dims);
    for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = 0.01f * static_cast<float>(i % 7);
  }
  NetBase* created = ws.CreateNet(net);
  const ProfileResult runs = ProfileNet(created, 1, 5, true);
  DeviceProfile profile = SyntheticProfile();
  RecordMeasuredOps(&profile, *created, ws, runs.runs);
  REQUIRE(profile.measured_copy_latency_us.count("cpu->cuda:0"));
  REQUIRE(profile.measured_copy_latency_us.count("cuda:0->cpu"));
  for (const auto& [key, us] : profile.measured_copy_latency_us) {
    INFO(key);
    CHECK(us >= 0);
    CHECK(us < 1e5);  // a copy of a few KB: well under 0.1 s
  }
}

TEST_CASE("SplitGpuOpTimes: a busy stream's events are the op's own work, an idle one's less the launch",
          "[auto_placement][measured]") {
  RunProfile run;
  auto add = [&](int op, const std::string& lane, double start, double dur, double host_start, double host) {
    OpTiming t;
    t.op = op;
    t.lane = lane;
    t.start_us = start;
    t.dur_us = dur;
    t.host_start_us = host_start;
    t.host_dur_us = host;
    run.ops.push_back(t);
  };
  add(0, "s", 0, 20, 0, 8);         // the stream's first op, issued onto it idle: 20 - 8
  add(1, "s", 20.2, 30, 10, 5);     // issued while op 0 ran: its events are its work
  add(2, "s", 60, 9, 60, 7);        // issued after op 1 ended: 9 - 7
  add(3, "s", 69, 5, 67, 1);        // a copy: left out
  add(4, "s", 74.5, 6, 60, 10);     // issued while the copy ran: its events are its work
  add(5, "t", 1, 4, 1, 6);          // launched for longer than its events: never below 0
  add(6, "main", 0, 50, 0, 50);     // a CPU op
  const std::vector<char> on_gpu{1, 1, 1, 1, 1, 1, 0}, is_copy{0, 0, 0, 1, 0, 0, 0};
  const auto split = SplitGpuOpTimes(run, on_gpu, is_copy);
  REQUIRE(split.size() == 5);
  CHECK(split.at(0).launch_us == 8);
  CHECK(split.at(0).device_us == Approx(12));
  CHECK(split.at(1).device_us == Approx(30));
  CHECK(split.at(2).device_us == Approx(2));
  CHECK(split.at(4).device_us == Approx(6));
  CHECK(split.at(4).launch_us == 10);
  CHECK(split.at(5).device_us == 0);
  CHECK(split.count(3) == 0);
  CHECK(split.count(6) == 0);
}

TEST_CASE("with overlap_gpu_launches a chain of GPU ops overlaps each launch with the kernels before it; "
          "the profile keeps both parts", "[auto_placement][measured]") {
  // Four Relus pinned to the GPU, on a 64-byte input: its copy takes the link's 10 us latency.
  caffe2::NetDef net;
  net.set_name("chain");
  net.add_external_input("x");
  std::map<std::string, TensorInfo> shapes{{"x", TensorInfo::Of({1, 16}, DataType::Float)}};
  std::string cur = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string out = "r" + std::to_string(i);
    DeviceToOption(Device::CUDA(0), Op(&net, "Relu", {cur}, {out})->mutable_device_option());
    cur = out;
  }
  net.add_external_output(cur);
  const std::string key = "cuda:0|" + OpSignature(net.op(0), {shapes["x"]});
  const double copy_in = 10 + 64 / 1e4;
  auto plan = [&](double launch, double device, bool split) {
    DeviceProfile p = SyntheticProfile();
    p.measured_op_us[key] = launch + device;
    if (split) p.measured_launch_us[key] = launch, p.measured_device_us[key] = device;
    p.overlap_gpu_launches = split;
    return AutoPlace(net, shapes, p);
  };
  // Kernel-bound (launch 2, kernel 50): every launch hides behind the copy or the kernel before.
  const auto whole = plan(2, 50, false), parts = plan(2, 50, true);
  CHECK(whole.predicted_us - parts.predicted_us == Approx(4 * 2));
  CHECK(parts.ops[0].predicted_us.at("cuda:0") == Approx(52));  // the op alone: both parts
  CHECK(parts.busy_us.at("cpu") == Approx(4 * 2));              // the host's launches
  CHECK(parts.busy_us.at("cuda:0") == Approx(4 * 50));
  // Launch-bound (launch 50, kernel 2): the GPU waits for each launch and runs only the last
  // kernel after the host is done: 4 launches + 1 kernel, where the whole times add 4 of each
  // after the input's copy.
  const auto whole_l = plan(50, 2, false), parts_l = plan(50, 2, true);
  CHECK(whole_l.predicted_us - parts_l.predicted_us == Approx(copy_in + 3 * 2));
  // The parts recorded but the overlap off (the default): charged whole.
  DeviceProfile off = SyntheticProfile();
  off.measured_op_us[key] = 52;
  off.measured_launch_us[key] = 2, off.measured_device_us[key] = 50;
  CHECK(AutoPlace(net, shapes, off).predicted_us == Approx(whole.predicted_us));

  DeviceProfile p = SyntheticProfile();
  p.measured_op_us[key] = 12;
  p.measured_launch_us[key] = 5;
  p.measured_device_us[key] = 7;
  double launch = 0, device = 0;
  CHECK_FALSE(DeviceProfile::FromJson(p.ToJson()).MeasuredSplit("cuda:0", OpSignature(net.op(0), {shapes["x"]}),
                                                                &launch, &device));
  p.overlap_gpu_launches = true;
  const DeviceProfile again = DeviceProfile::FromJson(p.ToJson());
  CHECK(again.overlap_gpu_launches);
  REQUIRE(again.MeasuredSplit("cuda:0", OpSignature(net.op(0), {shapes["x"]}), &launch, &device));
  CHECK(launch == 5);
  CHECK(device == 7);
  CHECK_FALSE(again.MeasuredSplit("cpu", OpSignature(net.op(0), {shapes["x"]}), &launch, &device));
  CHECK_THROWS_WITH(
      DeviceProfile::FromJson("{\"devices\": [{\"name\": \"cpu\"}], \"measured_launch_us\": {\"cpuRelu\": 1}}"),
      Catch::Contains("measured_launch_us") && Catch::Contains("<device>|<op signature>"));
  CHECK_THROWS_WITH(DeviceProfile::FromJson("{\"devices\": [{\"name\": \"cpu\"}], \"overlap_gpu_launches\": 1}"),
                    Catch::Contains("overlap_gpu_launches must be true or false"));
}

TEST_CASE("SplitGpuOpTimes: with the host's times, a kernel starts no earlier than its launch ends",
          "[auto_placement][measured]") {
  // A host-bound chain (launches of 100 us, kernels of 20 us): each start event runs as soon as
  // the previous op ends, but the kernel only once the host's call has returned.
  RunProfile run;
  for (int i = 0; i < 3; ++i) {
    OpTiming t;
    t.op = i, t.lane = "main thread cuda:0", t.host_lane = "main thread";
    t.host_start_us = 100.0 * i, t.host_dur_us = 100;
    t.start_us = i == 0 ? 2 : 100.0 * i + 20;  // after the previous kernel (or at once)
    t.dur_us = 100.0 * (i + 1) + 20 - t.start_us;
    run.ops.push_back(t);
  }
  OpTiming busy;  // a device-bound op: issued while the stream still had 300 us of work
  busy.op = 3, busy.lane = "main thread cuda:0", busy.host_lane = "main thread";
  busy.host_start_us = 300, busy.host_dur_us = 10, busy.start_us = 600, busy.dur_us = 50;
  run.ops.push_back(busy);
  const auto split = SplitGpuOpTimes(run, {1, 1, 1, 1}, {0, 0, 0, 0});
  REQUIRE(split.size() == 4);
  for (int i = 0; i < 3; ++i) {
    INFO("op " << i);
    CHECK(split.at(i).launch_us == 100);
    CHECK(split.at(i).device_us == Approx(20));
  }
  CHECK(split.at(3).device_us == Approx(50));
}
