// Profiler (core/profiler.h): per-op timings from both executors, per-type summary and copies'
// share, Chrome trace with one lane per worker showing ops overlap.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>
#include <unistd.h>

#include "core/npy.h"
#include "core/proto_io.h"

#include "core/net.h"
#include "core/profiler.h"
#include "core/workspace.h"

using namespace hetnet;

namespace {

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> shape, unsigned seed) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = u(rng);
}

// `branches` independent FC/Relu chains over x (heavy enough to take a millisecond or so each).
caffe2::NetDef WideNet(const std::string& type, int branches, int depth, Workspace* ws) {
  caffe2::NetDef net;
  net.set_name("wide");
  net.set_type(type);
  net.set_num_workers(2);
  net.add_external_input("x");
  Feed(ws, "x", {64, 256}, 1);
  for (int b = 0; b < branches; ++b) {
    std::string prev = "x";
    for (int d = 0; d < depth; ++d) {
      const std::string p = "b" + std::to_string(b) + "_" + std::to_string(d);
      net.add_external_input(p + "_w");
      net.add_external_input(p + "_b");
      Feed(ws, p + "_w", {256, 256}, 10 * b + d);
      Feed(ws, p + "_b", {256}, 100 + 10 * b + d);
      auto* fc = net.add_op();
      fc->set_type("FC");
      fc->add_input(prev);
      fc->add_input(p + "_w");
      fc->add_input(p + "_b");
      fc->add_output(p + "_fc");
      auto* relu = net.add_op();
      relu->set_type("Relu");
      relu->add_input(p + "_fc");
      relu->add_output(p + "_fc");
      prev = p + "_fc";
    }
  }
  return net;
}

// Sleeps `ms` then writes a scalar: its runs overlap across workers even when other processes
// leave this one a single core (FC runs need two free cores to overlap).
class ProfilerTestSleepOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(GetSingleArgument<int>("ms", 2)));
    Output(0, {1}, DataType::Float)->mutable_data<float>()[0] = 1.f;
  }
};
OPERATOR_SCHEMA(ProfilerTestSleep).NumInputs(0, 1).NumOutputs(1);
REGISTER_CPU_OPERATOR(ProfilerTestSleep, ProfilerTestSleepOp);

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("profiler: sequential net timed op by op on the calling thread", "[profiler]") {
  Workspace ws;
  NetBase* net = ws.CreateNet(WideNet("simple", 2, 2, &ws));
  RunProfile run = ProfileRun(net);
  REQUIRE(run.ops.size() == 8u);
  for (const auto& t : run.ops) {
    CHECK(t.lane == "main thread");
    CHECK(t.dur_us >= 0);
    CHECK(t.start_us >= run.start_us);
  }
  ProfileResult r = ProfileNet(net, 1, 3, true);
  CHECK(r.summary.runs() == 3);
  CHECK(r.runs.size() == 3u);
  auto types = r.summary.MeanTypeMs();
  REQUIRE(types.size() == 2u);
  CHECK(types["FC"] > 0);
  CHECK(r.summary.TypeCounts()["Relu"] == 4);
  CHECK(r.summary.CopyShare() == 0.0);
  const std::string md = r.summary.ToMarkdown();
  CHECK(md.find("| FC | 4 |") != std::string::npos);
  CHECK(md.find("copies 0.0000 ms/run (0.0000% of op time)") != std::string::npos);
}

TEST_CASE("profiler: dag lanes per worker, trace shows overlapping ops", "[profiler]") {
  Workspace ws;
  NetBase* net = ws.CreateNet(WideNet("dag", 4, 3, &ws));
  ProfileResult r = ProfileNet(net, 1, 4, true);
  auto overlaps = [](const RunProfile& run) {  // two ops on different lanes at the same time
    for (const auto& a : run.ops)
      for (const auto& b : run.ops)
        if (a.lane != b.lane && a.start_us < b.start_us + b.dur_us && b.start_us < a.start_us + a.dur_us)
          return true;
    return false;
  };
  for (const auto& run : r.runs) REQUIRE(run.ops.size() == 24u);
  caffe2::NetDef sleepers;  // 4 independent chains of 3 sleeping ops on 2 workers
  sleepers.set_name("sleepers");
  sleepers.set_type("dag");
  sleepers.set_num_workers(2);
  for (int b = 0; b < 4; ++b)
    for (int d = 0; d < 3; ++d) {
      auto* op = sleepers.add_op();
      op->set_type("ProfilerTestSleep");
      if (d > 0) op->add_input("s" + std::to_string(b) + "_" + std::to_string(d - 1));
      op->add_output("s" + std::to_string(b) + "_" + std::to_string(d));
    }
  RunProfile slept = ProfileRun(ws.CreateNet(sleepers));
  CHECK(overlaps(slept));
  CHECK(slept.wall_us < 12 * 2000);  // faster than one after the other
  const std::string json = ChromeTraceJson(r.runs);
  CHECK(json.rfind("{\"displayTimeUnit\"", 0) == 0);
  CHECK(Count(json, "\"ph\":\"X\"") == 4u * 24u);
  CHECK(Count(json, "\"thread_name\"") == 2u);  // two workers, two lanes
  CHECK(json.find("\"name\":\"worker 0\"") != std::string::npos);
  CHECK(json.find("\"name\":\"worker 1\"") != std::string::npos);
}

TEST_CASE("profiler: copy share counts copy ops; errors name the op", "[profiler]") {
  Workspace ws;
  caffe2::NetDef net = WideNet("simple", 1, 1, &ws);
  auto* copy = net.add_op();
  copy->set_type("Copy");
  copy->add_input("b0_0_fc");
  copy->add_output("copied");
  ProfileResult r = ProfileNet(ws.CreateNet(net), 0, 2, false);
  CHECK(r.summary.CopyShare() > 0.0);
  CHECK(r.summary.CopyShare() < 1.0);
  Feed(&ws, "b0_0_w", {256, 255}, 3);  // FC fails
  CHECK_THROWS_WITH(ProfileRun(ws.GetNet("wide")), Catch::Contains("operator #0 (FC)"));
}

#ifdef HETNET_CLI_PATH
TEST_CASE("hetnet run --profile --trace --memonger", "[profiler][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hetnet_profile_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Workspace ws;
  caffe2::NetDef net = WideNet("dag", 2, 2, &ws);
  net.add_external_output("b0_1_fc");
  WriteProtoToFile((dir / "predict.pb").string(), net);
  for (const auto& name : net.external_input())
    WriteNpy((dir / (name + ".npy")).string(), ws.GetBlob(name)->GetTensor());
  std::string cmd = std::string(HETNET_CLI_PATH) + " run --predict " + (dir / "predict.pb").string();
  for (const auto& name : net.external_input()) cmd += " --input " + name + "=" + (dir / (name + ".npy")).string();
  // As written (--no-optimize): 8 ops per run in the trace (the rewrite would fuse the Relus).
  cmd += " --iters 3 --profile --memonger --no-optimize --trace " + (dir / "trace.json").string() + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = pclose(p);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("memonger on net 'wide'") != std::string::npos);
  CHECK(out.find("| FC | 4 |") != std::string::npos);
  CHECK(out.find("trace of 3 runs written to") != std::string::npos);
  const std::string trace = ReadFileBytes((dir / "trace.json").string());
  CHECK(Count(trace, "\"ph\":\"X\"") == 3u * 8u);
  fs::remove_all(dir);
}
#endif

TEST_CASE("profiler: a GPU op's trace shows its launch on the host's lane beside its device span", "[profiler]") {
  RunProfile run;
  run.net_name = "n";
  run.op_types = {"Relu", "Conv"};
  run.op_names = {"", ""};
  OpTiming cpu;
  cpu.op = 0, cpu.lane = "main thread", cpu.start_us = 1, cpu.dur_us = cpu.host_dur_us = 2;
  OpTiming gpu;
  gpu.op = 1, gpu.lane = "main thread cuda:0", gpu.start_us = 9, gpu.dur_us = 40;
  gpu.host_start_us = 3, gpu.host_dur_us = 5, gpu.host_lane = "main thread";
  run.ops = {cpu, gpu};
  const std::string json = ChromeTraceJson({run});
  CHECK(Count(json, "\"ph\":\"X\"") == 3u);
  CHECK(Count(json, "\"thread_name\"") == 2u);  // the launch shares the CPU op's lane
  CHECK(json.find("{\"name\":\"Conv (launch)\",\"cat\":\"launch\",\"ph\":\"X\",\"ts\":3.000,\"dur\":5.000,\"pid\":0,"
                  "\"tid\":0,") != std::string::npos);
}
