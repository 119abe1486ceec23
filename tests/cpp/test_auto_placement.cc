// AutoPlace on synthetic profiles (no GPU needed): the planner finds the brute-force optimum on
// chains, diamonds, nets with CPU-only ops in the middle and memory caps that force a split;
// refuses clearly when nothing fits; keeps pins; small batch-1 ops stay by their CPU data.
#include <catch2/catch.hpp>

#include "core/placement.h"
#include "test_auto_placement_util.h"

using namespace hetnet;
using namespace auto_placement_test;

namespace {

// x(n, k0) -> FC -> Relu -> FC -> Relu -> FC: widths alternate small and large.
caffe2::NetDef Chain(int64_t n, std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("chain");
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({n, 256}, DataType::Float);
  AddFC(&net, shapes, "x", "h1", 256, 1024);
  Op(&net, "Relu", {"h1"}, {"r1"});
  AddFC(&net, shapes, "r1", "h2", 1024, 1024);
  Op(&net, "Relu", {"h2"}, {"r2"});
  AddFC(&net, shapes, "r2", "y", 1024, 16);
  net.add_external_output("y");
  return net;
}

// x -> FC a -> {Relu b, Sigmoid c} -> Add -> FC: two branches that may overlap on two devices.
caffe2::NetDef Diamond(int64_t n, std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("diamond");
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({n, 512}, DataType::Float);
  AddFC(&net, shapes, "x", "a", 512, 512);
  AddFC(&net, shapes, "a", "b", 512, 512);
  Op(&net, "Sigmoid", {"a"}, {"c"});
  Op(&net, "Add", {"b", "c"}, {"d"});
  AddFC(&net, shapes, "d", "y", 512, 8);
  net.add_external_output("y");
  return net;
}

}  // namespace

TEST_CASE("auto placement: chains and diamonds reach the brute-force optimum", "[auto_placement]") {
  const auto profile = SyntheticProfile();
  for (int64_t batch : {1, 8, 64, 512}) {
    for (auto objective : {AutoPlacementOptions::Objective::kLatency, AutoPlacementOptions::Objective::kThroughput}) {
      for (int which = 0; which < 2; ++which) {
        std::map<std::string, TensorInfo> shapes;
        const auto net = which ? Diamond(batch, &shapes) : Chain(batch, &shapes);
        AutoPlacementOptions options;
        options.objective = objective;
        options.min_mixed_gain = 0;  // the search's own optimum
        INFO(net.name() << " batch " << batch << " objective " << static_cast<int>(objective));
        const auto r = AutoPlace(net, shapes, profile, options);
        CHECK(r.exact);
        const double best = BruteForce(net, shapes, profile, options);
        CHECK(r.objective_us == Approx(best).epsilon(1e-9));
        for (const auto& [name, us] : r.baselines_us)
          if (objective == AutoPlacementOptions::Objective::kLatency) CHECK(r.predicted_us <= us + 1e-9);
        // Every op got a device option, and the explanation names the alternatives.
        for (const auto& op : net.op()) CHECK_FALSE(op.has_device_option());
        for (int i = 0; i < r.net.op_size(); ++i) CHECK(r.net.op(i).has_device_option());
        for (const auto& op : r.ops) CHECK(op.why.find(" vs ") != std::string::npos);
      }
    }
  }
}

TEST_CASE("auto placement: a mixed placement must beat the best one-device one by min_mixed_gain", "[auto_placement]") {
  const auto profile = SyntheticProfile();
  int mixed_kept = 0, uniform_taken = 0;
  for (int64_t batch : {1, 2, 4, 8, 16, 32, 64, 128, 512})
    for (int which = 0; which < 2; ++which) {
      std::map<std::string, TensorInfo> shapes;
      const auto net = which ? Diamond(batch, &shapes) : Chain(batch, &shapes);
      INFO(net.name() << " batch " << batch);
      AutoPlacementOptions exact;
      exact.min_mixed_gain = 0;
      const auto opt = AutoPlace(net, shapes, profile, exact);
      const double best_uniform = std::min(opt.baselines_us.at("all cpu"), opt.baselines_us.at("all cuda:0"));
      const bool opt_mixed = OnDevice(opt, "cpu") != 0 && OnDevice(opt, "cuda:0") != 0;
      for (double gain : {0.03, 0.25}) {
        AutoPlacementOptions options;
        options.min_mixed_gain = gain;
        const auto r = AutoPlace(net, shapes, profile, options);
        const bool mixed = OnDevice(r, "cpu") != 0 && OnDevice(r, "cuda:0") != 0;
        if (opt_mixed && opt.predicted_us * (1 + gain) < best_uniform) {
          CHECK(mixed);
          CHECK(r.predicted_us == Approx(opt.predicted_us).epsilon(1e-9));
          ++mixed_kept;
        } else {
          CHECK_FALSE(mixed);
          CHECK(r.predicted_us == Approx(best_uniform).epsilon(1e-9));
          uniform_taken += opt_mixed;
        }
      }
    }
  CHECK(mixed_kept > 0);  // the nets exercise both sides of the rule
  CHECK(uniform_taken > 0);
}

TEST_CASE("auto placement: batch-1 small ops stay on the CPU by their data, batch-64 big GEMMs go to the GPU",
          "[auto_placement]") {
  const auto profile = SyntheticProfile();
  {
    std::map<std::string, TensorInfo> shapes;
    caffe2::NetDef net;
    net.set_name("small");
    net.add_external_input("x");
    shapes["x"] = TensorInfo::Of({1, 64}, DataType::Float);
    AddFC(&net, &shapes, "x", "h", 64, 64);
    Op(&net, "Relu", {"h"}, {"y"});
    const auto r = AutoPlace(net, shapes, profile);
    CHECK(OnDevice(r, "cpu") == 2);
    CHECK(r.ops[0].predicted_us.at("cpu") < r.ops[0].predicted_us.at("cuda:0") + 20);
  }
  {
    std::map<std::string, TensorInfo> shapes;
    caffe2::NetDef net;
    net.set_name("big");
    net.add_external_input("x");
    shapes["x"] = TensorInfo::Of({64, 2048}, DataType::Float);
    AddFC(&net, &shapes, "x", "h", 2048, 2048);
    AddFC(&net, &shapes, "h", "y", 2048, 2048);
    const auto r = AutoPlace(net, shapes, profile);
    CHECK(OnDevice(r, "cuda:0") == 2);
    CHECK(r.predicted_us < r.baselines_us.at("all cpu"));
    CHECK(r.ToText().find("#1 FC -> cuda:0") != std::string::npos);
  }
}

TEST_CASE("auto placement: an op without a GPU kernel in the middle stays on the CPU", "[auto_placement]") {
  const auto profile = SyntheticProfile();
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net;
  net.set_name("cpu_only_middle");
  net.add_external_input("x");
  shapes["x"] = TensorInfo::Of({64, 1024}, DataType::Float);
  AddFC(&net, &shapes, "x", "a", 1024, 1024);
  AddFC(&net, &shapes, "a", "b", 1024, 1024);
  Op(&net, "Tanh", {"b"}, {"c"});  // declared CPU-only below
  AddFC(&net, &shapes, "c", "d", 1024, 1024);
  AddFC(&net, &shapes, "d", "y", 1024, 1024);
  AutoPlacementOptions options;
  options.has_kernel = [](const std::string& type, const Device& d) { return d.is_cpu() || type != "Tanh"; };
  const auto r = AutoPlace(net, shapes, profile, options);
  CHECK(r.ops[2].chosen == "cpu");
  CHECK(r.ops[2].predicted_us.count("cuda:0") == 0);
  CHECK(r.ops[2].why.find("only cpu has a kernel") != std::string::npos);
  CHECK(r.ops[1].chosen == "cuda:0");
  CHECK(r.ops[3].chosen == "cuda:0");
  CHECK(r.objective_us == Approx(BruteForce(net, shapes, profile, options)).epsilon(1e-9));
  CHECK(r.baselines_us.count("all cuda:0") == 0);  // not every op has a GPU kernel
}

TEST_CASE("auto placement: kernels come from this build's registry by default", "[auto_placement]") {
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net;
  net.set_name("registry");
  auto* fill = Op(&net, "GivenTensorStringFill", {}, {"s"});  // a CPU-only type
  auto* arg = fill->add_arg();
  arg->set_name("shape");
  arg->add_ints(1);
  auto* values = fill->add_arg();
  values->set_name("values");
  values->add_strings("a");
  net.add_external_input("x");
  shapes["x"] = TensorInfo::Of({8, 32}, DataType::Float);
  AddFC(&net, &shapes, "x", "y", 32, 32);
  const auto r = AutoPlace(net, shapes, SyntheticProfile());
  CHECK(r.ops[0].predicted_us.count("cuda:0") == (HasCudaSupport() ? 0u : 1u));
  CHECK(r.ops[1].predicted_us.size() == 2);
}

TEST_CASE("auto placement: memory caps force a split, and the split is the best that fits", "[auto_placement]") {
  const auto profile = SyntheticProfile();
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net;
  net.set_name("two_big_layers");
  net.add_external_input("x");
  shapes["x"] = TensorInfo::Of({64, 2048}, DataType::Float);
  AddFC(&net, &shapes, "x", "h", 2048, 2048);  // 16 MiB of weights each
  AddFC(&net, &shapes, "h", "y", 2048, 2048);
  const auto free = AutoPlace(net, shapes, profile);
  REQUIRE(OnDevice(free, "cuda:0") == 2);
  CHECK(free.peak_bytes.at("cuda:0") > 32 << 20);
  AutoPlacementOptions options;
  options.memory_caps["cuda:0"] = 24 << 20;  // room for one layer's weights
  const auto r = AutoPlace(net, shapes, profile, options);
  CHECK(OnDevice(r, "cuda:0") == 1);
  CHECK(r.peak_bytes.at("cuda:0") <= 24 << 20);
  CHECK(r.objective_us == Approx(BruteForce(net, shapes, profile, options)).epsilon(1e-9));
  CHECK(r.ToText().find("of 24.0 MiB") != std::string::npos);
}

TEST_CASE("auto placement: a cap too small for any placement is refused naming device, need and cap",
          "[auto_placement]") {
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net;
  net.set_name("too_big");
  net.add_external_input("x");
  shapes["x"] = TensorInfo::Of({64, 2048}, DataType::Float);
  AddFC(&net, &shapes, "x", "h", 2048, 2048);
  AutoPlacementOptions options;
  options.memory_caps = {{"cpu", 1 << 20}, {"cuda:0", 1 << 20}};
  for (int limit : {14, 0}) {  // exact and heuristic
    options.exact_limit = limit;
    try {
      AutoPlace(net, shapes, SyntheticProfile(), options);
      FAIL("no placement fits, yet AutoPlace returned");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      const std::string m = e.message();
      CHECK(m.find("too_big") != std::string::npos);
      CHECK(m.find("cap is 1048576 bytes") != std::string::npos);
      CHECK((m.find("on cpu") != std::string::npos || m.find("on cuda:0") != std::string::npos));
    }
  }
  options.memory_caps = {{"tpu:0", 1}};
  CHECK_THROWS_WITH(AutoPlace(net, shapes, SyntheticProfile(), options), Catch::Contains("not a candidate"));
  AutoPlacementOptions absent;
  absent.devices = {Device::CUDA(3)};
  CHECK_THROWS_WITH(AutoPlace(net, shapes, SyntheticProfile(), absent), Catch::Contains("not in the device profile"));
}

TEST_CASE("auto placement: pinned ops keep the user's device unless overridden", "[auto_placement]") {
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net;
  net.set_name("pinned");
  net.add_external_input("x");
  shapes["x"] = TensorInfo::Of({1, 16}, DataType::Float);
  AddFC(&net, &shapes, "x", "h", 16, 16);
  Op(&net, "Relu", {"h"}, {"y"});
  DeviceToOption(Device::CUDA(0), net.mutable_op(1)->mutable_device_option());
  const auto r = AutoPlace(net, shapes, SyntheticProfile());
  CHECK(r.ops[1].chosen == "cuda:0");
  CHECK(r.ops[1].pinned);
  CHECK(r.ops[1].why == "pinned by the user");
  CHECK(DeviceFromOption(r.net.op(1).device_option()) == Device::CUDA(0));
  CHECK(r.ops[0].chosen == "cpu");  // tiny FC next to its CPU data
  AutoPlacementOptions options;
  options.override_pinned = true;
  const auto moved = AutoPlace(net, shapes, SyntheticProfile(), options);
  CHECK(moved.ops[1].chosen == "cpu");
  CHECK_FALSE(moved.ops[1].pinned);
}

TEST_CASE("auto placement: the placed net goes through the copy pass, and the fallback profile is CPU-only here",
          "[auto_placement]") {
  std::map<std::string, TensorInfo> shapes;
  const auto net = Chain(64, &shapes);
  const auto r = AutoPlace(net, shapes, SyntheticProfile());
  const auto placed = CrossDeviceCopyPass(r.net);
  int copies = static_cast<int>(placed.report.copies.size());
  CHECK(copies >= (OnDevice(r, "cuda:0") > 0 ? 1 : 0));
  const auto fallback = BuiltinFallbackProfile(0);
  REQUIRE(fallback.devices.size() == 1);
  CHECK(fallback.source.find("rough") != std::string::npos);
  const auto cpu_only = AutoPlace(net, shapes, fallback);
  CHECK(OnDevice(cpu_only, "cpu") == net.op_size());
  CHECK(cpu_only.ToText().find("rough constants") != std::string::npos);
  CHECK(BuiltinFallbackProfile(2).devices.size() == 3);
  CHECK_THROWS_WITH(ParseDeviceList({"cpu", "gpu:0"}), Catch::Contains("unknown device"));
}
