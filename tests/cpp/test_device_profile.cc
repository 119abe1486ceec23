// DeviceProfile (core/device_profile.h): JSON round trip, strict rejection of malformed files
// (naming file and field), lookups, shape classes, and folding profiled times into corrections.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/device_profile.h"
#include "core/error.h"
#include "core/profiler.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

DeviceProfile Sample() {
  DeviceProfile p;
  p.machine = "test box";
  p.source = "hand-written for tests";
  DeviceCaps cpu;
  cpu.name = "cpu";
  cpu.gemm_gflops = {{"small", 2.5}, {"medium", 40.125}, {"large", 80}};
  cpu.conv_gflops = {{"small", 1.5}, {"large", 60}};
  cpu.mem_bandwidth_gbs = 12.3456789012345;
  cpu.dispatch_us = 0.7;
  cpu.memory_bytes = 128LL << 30;
  DeviceCaps gpu = cpu;
  gpu.name = "cuda:0";
  gpu.gemm_gflops["large"] = 50000;
  gpu.dispatch_us = 5;
  gpu.memory_bytes = 80LL << 30;
  p.devices = {cpu, gpu};
  p.links = {{"cpu", "cuda:0", true, 25, 10}, {"cpu", "cuda:0", false, 9.5, 15}, {"cuda:0", "cpu", true, 24, 11}};
  p.corrections["cuda:0/FC"] = 1.25;
  return p;
}

// The kind and message of what `fn` throws.
template <typename Fn>
std::pair<ErrorKind, std::string> Thrown(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  FAIL("no error thrown");
  return {ErrorKind::kRuntime, ""};
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("device profile: shape classes", "[auto_placement][profile]") {
  CHECK(ShapeClassOf(0) == ShapeClass::kSmall);
  CHECK(ShapeClassOf(999999) == ShapeClass::kSmall);
  CHECK(ShapeClassOf(1e6) == ShapeClass::kMedium);
  CHECK(ShapeClassOf(99.9e6) == ShapeClass::kMedium);
  CHECK(ShapeClassOf(1e8) == ShapeClass::kLarge);
  CHECK(std::string(ShapeClassName(ShapeClass::kSmall)) == "small");
  CHECK(std::string(ShapeClassName(ShapeClass::kMedium)) == "medium");
  CHECK(std::string(ShapeClassName(ShapeClass::kLarge)) == "large");
}

TEST_CASE("device profile: JSON and file round trip", "[auto_placement][profile]") {
  const DeviceProfile p = Sample();
  TempDir dir;
  const std::string path = dir.File("p.json");
  p.Save(path);
  const DeviceProfile q = DeviceProfile::Load(path);
  CHECK(q.machine == p.machine);
  CHECK(q.source == p.source);
  REQUIRE(q.devices.size() == 2);
  CHECK(q.devices[0].name == "cpu");
  CHECK(q.devices[0].gemm_gflops == p.devices[0].gemm_gflops);
  CHECK(q.devices[0].conv_gflops == p.devices[0].conv_gflops);
  CHECK(q.devices[0].mem_bandwidth_gbs == p.devices[0].mem_bandwidth_gbs);  // exact: shortest round-trip digits
  CHECK(q.devices[1].memory_bytes == 80LL << 30);
  CHECK(q.devices[1].dispatch_us == 5);
  REQUIRE(q.links.size() == 3);
  CHECK(q.links[1].pinned == false);
  CHECK(q.links[1].bandwidth_gbs == 9.5);
  CHECK(q.corrections == p.corrections);
  CHECK(q.ToJson() == p.ToJson());
}

TEST_CASE("device profile: lookups", "[auto_placement][profile]") {
  const DeviceProfile p = Sample();
  REQUIRE(p.Find("cuda:0") != nullptr);
  CHECK(p.Find("cuda:0")->gemm_gflops.at("large") == 50000);
  CHECK(p.Find("cuda:1") == nullptr);
  REQUIRE(p.FindLink("cpu", "cuda:0") != nullptr);
  CHECK(p.FindLink("cpu", "cuda:0")->bandwidth_gbs == 25);
  CHECK(p.FindLink("cpu", "cuda:0", false)->bandwidth_gbs == 9.5);
  CHECK(p.FindLink("cuda:0", "cpu", false) == nullptr);
  CHECK(p.FindLink("cuda:0", "cuda:1") == nullptr);
  CHECK(p.Correction("cuda:0", "FC") == 1.25);
  CHECK(p.Correction("cpu", "FC") == 1.0);
  CHECK(p.Correction("cuda:0", "Conv") == 1.0);
}

TEST_CASE("device profile: minimal file takes defaults", "[auto_placement][profile]") {
  const DeviceProfile p = DeviceProfile::FromJson(R"({"devices": [{"name": "cpu"}]})");
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].gemm_gflops.empty());
  CHECK(p.devices[0].memory_bytes == 0);
  CHECK(p.links.empty());
  CHECK(p.corrections.empty());
  // Whole-valued doubles are accepted for byte counts (hand-written 8e10).
  CHECK(DeviceProfile::FromJson(R"({"devices": [{"name": "cpu", "memory_bytes": 8e10}]})").devices[0].memory_bytes ==
        80000000000LL);
}

TEST_CASE("device profile: missing file is kNotFound", "[auto_placement][profile]") {
  TempDir dir;
  auto r = Thrown([&] { DeviceProfile::Load(dir.File("absent.json")); });
  CHECK(r.first == ErrorKind::kNotFound);
  CHECK_THAT(r.second, Catch::Contains("absent.json"));
}

TEST_CASE("device profile: malformed files name the file and the field", "[auto_placement][profile]") {
  const std::string good = Sample().ToJson();
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"", "not valid JSON"},
      {"{\"devices\": [", "not valid JSON"},
      {"[1, 2]", "(top level)"},
      {"{}", "'devices' is missing"},
      {R"({"devices": {}})", "'devices' must be an array"},
      {R"({"devices": [3]})", "'devices[0]' must be a JSON object"},
      {R"({"devices": [{}]})", "'devices[0].name' is missing"},
      {R"({"devices": [{"name": ""}]})", "'devices[0].name' must not be empty"},
      {R"({"devices": [{"name": 7}]})", "'devices[0].name' must be a string"},
      {R"({"devices": [{"name": "cpu"}, {"name": "cpu"}]})", "'devices[1].name' repeats device 'cpu'"},
      {R"({"devices": [{"name": "cpu", "gemm_gflop": {}}]})", "'devices[0].gemm_gflop' is not a known field"},
      {R"({"devices": [{"name": "cpu", "gemm_gflops": {"huge": 1}}]})", "'devices[0].gemm_gflops.huge' is not a known"},
      {R"({"devices": [{"name": "cpu", "gemm_gflops": {"small": "fast"}}]})", "'devices[0].gemm_gflops.small' must be a number"},
      {R"({"devices": [{"name": "cpu", "gemm_gflops": {"small": 0}}]})", "must be a positive finite number"},
      {R"({"devices": [{"name": "cpu", "mem_bandwidth_gbs": -1}]})", "'devices[0].mem_bandwidth_gbs' must be a finite number >= 0"},
      {R"({"devices": [{"name": "cpu", "memory_bytes": 1.5}]})", "'devices[0].memory_bytes' must be a whole number"},
      {R"({"devices": [{"name": "cpu", "memory_bytes": -4}]})", "'devices[0].memory_bytes' must be >= 0"},
      {R"({"devices": [{"name": "cpu", "memory_bytes": 1e30}]})", "'devices[0].memory_bytes' must be a whole number"},
      {R"({"devices": [{"name": "cpu", "dispatch_us": NaN}]})", "not valid JSON"},
      {R"({"devices": [{"name": "cpu", "dispatch_us": 1e400}]})", "not valid JSON at offset 44: Number too big"},
      {R"({"devices": [], "links": [{"from": "cpu", "to": "cuda:0"}]})", "'links[0].bandwidth_gbs' is missing"},
      {R"({"devices": [], "links": [{"from": "cpu", "to": "cuda:0", "bandwidth_gbs": 0}]})", "'links[0].bandwidth_gbs' must be a positive"},
      {R"({"devices": [], "links": [{"to": "cuda:0", "bandwidth_gbs": 1}]})", "'links[0].from' is missing"},
      {R"({"devices": [], "links": [{"from": "cpu", "to": "cuda:0", "bandwidth_gbs": 1, "pinned": 1}]})", "'links[0].pinned' must be true or false"},
      {R"({"devices": [], "links": [{"from": "a", "to": "b", "bandwidth_gbs": 1}, {"from": "a", "to": "b", "bandwidth_gbs": 2}]})",
       "'links[1].from' repeats the link a -> b (pinned)"},
      {R"({"devices": [], "corrections": {"FC": 2}})", "'corrections.FC' is not of the form"},
      {R"({"devices": [], "corrections": {"cpu/FC": 0}})", "'corrections.cpu/FC' must be a positive"},
      {R"({"devices": [], "corrections": []})", "'corrections' must be a JSON object"},
      {R"({"devices": [], "machine": 1})", "'machine' must be a string"},
      {R"({"devices": [], "extra": 1})", "'extra' is not a known field"},
      {Replace(good, "\"dispatch_us\": 5.0", "\"dispatch_us\": \"5\""), "'devices[1].dispatch_us' must be a number"},
  };
  TempDir dir;
  for (const Case& c : cases) {
    INFO(c.text);
    const std::string path = dir.Write("bad.json", c.text);
    auto r = Thrown([&] { DeviceProfile::Load(path); });
    CHECK(r.first == ErrorKind::kInvalidArgument);
    CHECK_THAT(r.second, Catch::Contains(path) && Catch::Contains(c.expect));
  }
}

// fuzz_device_profile's crash: RapidJSON 1.1.0's own conversion of this number read outside its table.
TEST_CASE("device profile: a 530-digit number with a large negative exponent reads as zero", "[auto_placement][profile]") {
  const std::string number = "10999999999999998." + std::string("99999999999999919999999900000000000020") +
                             std::string(450, '9') + "909999999999999999990444442e-444";
  const DeviceProfile p = DeviceProfile::FromJson(R"({"devices": [{"name": "cpu", "dispatch_us": )" + number + "}]}", "t");
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].dispatch_us == 0.0);
  // Trailing garbage after it (as the fuzzer's input had) is still an error, not a crash.
  auto r = Thrown([&] { DeviceProfile::FromJson(number + "*44444444 444444", "t"); });
  CHECK_THAT(r.second, Catch::Contains("not valid JSON at offset 538"));
}

TEST_CASE("device profile: folding a profiled run into corrections", "[auto_placement][profile]") {
  DeviceProfile p = Sample();  // cuda:0/FC starts at 1.25
  RunProfile run;
  run.net_name = "n";
  run.op_types = {"FC", "FC", "Relu", "CopyCPUToGPU", "FC", "Conv"};
  const std::vector<std::string> devices = {"cuda:0", "cuda:0", "cpu", "cuda:0", "cpu", "cpu"};
  // Measured 2x and 8x the prediction: geometric mean 4. Relu 0.5x. The copy is skipped, and so is
  // the Conv with no prediction.
  const std::vector<double> predicted = {10, 10, 4, 1, 3, 0};
  const double measured[] = {20, 80, 2, 100, 3, 50};
  for (int i = 0; i < 6; ++i) {
    OpTiming t;
    t.op = i;
    t.dur_us = measured[i];
    run.ops.push_back(t);
  }
  CHECK(FoldProfiledRun(&p, run, devices, predicted) == 3);
  CHECK(p.Correction("cuda:0", "FC") == Approx(1.25 * 4));
  CHECK(p.Correction("cpu", "Relu") == Approx(0.5));
  CHECK(p.Correction("cpu", "FC") == Approx(1.0));  // measured as predicted: recorded as 1
  CHECK(p.corrections.count("cpu/FC") == 1);
  CHECK(p.corrections.count("cuda:0/CopyCPUToGPU") == 0);
  CHECK(p.corrections.count("cpu/Conv") == 0);
  // Survives a save/load.
  CHECK(DeviceProfile::FromJson(p.ToJson()).Correction("cpu", "Relu") == Approx(0.5));

  // Mismatched sizes are refused.
  auto r = Thrown([&] { FoldProfiledRun(&p, run, {"cpu"}, predicted); });
  CHECK(r.first == ErrorKind::kInvalidArgument);
  CHECK_THAT(r.second, Catch::Contains("6 ops"));
  run.ops[0].op = 17;
  r = Thrown([&] { FoldProfiledRun(&p, run, devices, predicted); });
  CHECK_THAT(r.second, Catch::Contains("op 17"));
}

TEST_CASE("device profile: the shipped H100 profile loads and says where it was measured", "[auto_placement][profile]") {
  const DeviceProfile p = DeviceProfile::Load(std::string(HETNET_SOURCE_DIR) + "/profiles/h100_default.json");
  CHECK_THAT(p.source, Catch::Contains("measured by `hetnet calibrate`") && Catch::Contains("H100"));
  const DeviceCaps* cpu = p.Find("cpu");
  const DeviceCaps* gpu = p.Find("cuda:0");
  REQUIRE(cpu != nullptr);
  REQUIRE(gpu != nullptr);
  for (const char* cls : {"small", "medium", "large"}) {
    CHECK(cpu->gemm_gflops.count(cls) == 1);
    CHECK(gpu->conv_gflops.count(cls) == 1);
  }
  // The trade the planner weighs: the GPU wins large GEMMs, loses on fixed cost per op.
  CHECK(gpu->gemm_gflops.at("large") > 10 * cpu->gemm_gflops.at("large"));
  CHECK(gpu->dispatch_us > 10 * cpu->dispatch_us);
  CHECK(gpu->memory_bytes > (int64_t{70} << 30));
  REQUIRE(p.FindLink("cpu", "cuda:0") != nullptr);
  REQUIRE(p.FindLink("cpu", "cuda:0", false) != nullptr);
  REQUIRE(p.FindLink("cuda:0", "cpu") != nullptr);
  CHECK(p.FindLink("cpu", "cuda:0", false)->bandwidth_gbs < p.FindLink("cpu", "cuda:0")->bandwidth_gbs);
}
