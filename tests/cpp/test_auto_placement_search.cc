// AutoPlace's heuristic against the exhaustive search on random nets (the optimality gap), its
// planning time on a ResNet-50-sized net, and placement="auto" at net creation on this machine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "core/net.h"
#include "core/profiler.h"
#include "core/workspace.h"
#include "test_auto_placement_util.h"

using namespace hetnet;
using namespace auto_placement_test;

namespace {

// A random DAG of FC / Relu / Sigmoid / Add over blobs of a few widths.
caffe2::NetDef RandomNet(std::mt19937* rng, int ops, std::map<std::string, TensorInfo>* shapes) {
  static const int64_t widths[] = {16, 256, 1024};
  static const int64_t batches[] = {1, 16, 128};
  const int64_t batch = batches[(*rng)() % 3];
  caffe2::NetDef net;
  net.set_name("random");
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({batch, 256}, DataType::Float);
  std::vector<std::pair<std::string, int64_t>> blobs{{"x", 256}};
  for (int i = 0; i < ops; ++i) {
    const std::string out = "b" + std::to_string(i);
    const auto in = blobs[(*rng)() % blobs.size()];
    const int kind = (*rng)() % 4;
    if (kind == 0 || i == 0) {
      const int64_t m = widths[(*rng)() % 3];
      AddFC(&net, shapes, in.first, out, in.second, m);
      blobs.push_back({out, m});
      continue;
    }
    if (kind == 3) {  // Add of two blobs of one width, when there are two
      std::vector<std::string> same;
      for (const auto& b : blobs)
        if (b.second == in.second && b.first != in.first) same.push_back(b.first);
      if (!same.empty()) {
        Op(&net, "Add", {in.first, same[(*rng)() % same.size()]}, {out});
        blobs.push_back({out, in.second});
        continue;
      }
    }
    Op(&net, kind == 1 ? "Relu" : "Sigmoid", {in.first}, {out});
    blobs.push_back({out, in.second});
  }
  return net;
}

// ResNet-50-sized: 32 residual blocks FC -> Relu -> FC -> Add(skip) -> Relu, 160 ops.
caffe2::NetDef ResidualNet(int blocks, int64_t batch, std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("residual");
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({batch, 512}, DataType::Float);
  std::string cur = "x";
  for (int b = 0; b < blocks; ++b) {
    const std::string p = "blk" + std::to_string(b) + "_";
    AddFC(&net, shapes, cur, p + "a", 512, 512);
    Op(&net, "Relu", {p + "a"}, {p + "ar"});
    AddFC(&net, shapes, p + "ar", p + "c", 512, 512);
    Op(&net, "Add", {p + "c", cur}, {p + "s"});
    Op(&net, "Relu", {p + "s"}, {p + "out"});
    cur = p + "out";
  }
  net.add_external_output(cur);
  return net;
}

void Feed(Workspace* ws, const std::string& name, const std::vector<int64_t>& shape) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(shape);
  for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = 0.01f * static_cast<float>(i % 7);
}

void SetArg(caffe2::NetDef* net, const std::string& name, const std::string& value) {
  auto* a = net->add_arg();
  a->set_name(name);
  a->set_s(value);
}

}  // namespace

TEST_CASE("auto placement: heuristic gap against the exhaustive search on random nets", "[auto_placement]") {
  std::mt19937 rng(17);
  std::vector<double> gaps;
  for (int trial = 0; trial < 40; ++trial) {
    const int gpus = trial % 4 == 3 ? 2 : 1;
    const auto profile = SyntheticProfile(gpus);
    std::map<std::string, TensorInfo> shapes;
    const auto net = RandomNet(&rng, gpus == 2 ? 7 : 11, &shapes);
    AutoPlacementOptions options;
    options.objective = trial % 2 ? AutoPlacementOptions::Objective::kThroughput
                                  : AutoPlacementOptions::Objective::kLatency;
    const auto exact = AutoPlace(net, shapes, profile, options);
    REQUIRE(exact.exact);
    options.exact_limit = 0;
    const auto heuristic = AutoPlace(net, shapes, profile, options);
    CHECK_FALSE(heuristic.exact);
    CHECK(exact.objective_us <= heuristic.objective_us * (1 + 1e-9));
    gaps.push_back(heuristic.objective_us / exact.objective_us - 1);
  }
  std::sort(gaps.begin(), gaps.end());
  const double median = gaps[gaps.size() / 2], worst = gaps.back();
  WARN("heuristic optimality gap over " << gaps.size() << " random nets: median " << median * 100 << "%, worst "
                                        << worst * 100 << "%");
  CHECK(median <= 0.05);
  CHECK(worst <= 0.25);
}

TEST_CASE("auto placement: plans a ResNet-50-sized net (160 ops) in milliseconds", "[auto_placement]") {
  for (int gpus : {1, 2}) {
    std::map<std::string, TensorInfo> shapes;
    const auto net = ResidualNet(32, 32, &shapes);
    REQUIRE(net.op_size() == 160);
    const auto r = AutoPlace(net, shapes, SyntheticProfile(gpus));
    CHECK_FALSE(r.exact);
    WARN("160-op residual net, " << gpus << " GPU(s): planner " << r.planner_ms << " ms, "
                                 << r.placements_evaluated << " placements simulated, predicted " << r.predicted_us
                                 << " us (all cpu " << r.baselines_us.at("all cpu") << " us)");
    CHECK(r.planner_ms < 2000);  // generous: timing asserts may not be tight
    for (const auto& [name, us] : r.baselines_us) CHECK(r.predicted_us <= us + 1e-6);
  }
}

TEST_CASE("auto placement: placement=\"auto\" nets are placed at creation and run here", "[auto_placement]") {
  Workspace ws;
  std::map<std::string, TensorInfo> shapes;
  auto net = ResidualNet(2, 4, &shapes);
  for (const auto& [name, info] : shapes) Feed(&ws, name, info.dims);
  SetArg(&net, "placement", "auto");
  SetArg(&net, "placement_objective", "throughput");
  NetBase* created = ws.CreateNet(net);
  created->Run();
  const auto& report = created->placement();
  int automatic = 0;
  for (const auto& op : report.ops) {
    if (op.reason.rfind("auto: ", 0) == 0) ++automatic;
    if (NumCudaDevices() == 0) CHECK(op.device.is_cpu());  // the fallback profile has only the CPU here
  }
  CHECK(automatic == net.op_size());
  REQUIRE(ws.GetBlob("blk1_out") != nullptr);
  CHECK(ws.GetBlob("blk1_out")->GetTensor().numel() == 4 * 512);

  auto bad = net;
  bad.set_name("bad");
  bad.mutable_arg(0)->set_s("magic");
  CHECK_THROWS_WITH(ws.CreateNet(bad), Catch::Contains("expected \"auto\""));
}

TEST_CASE("auto placement: predicted beside measured after a profiled run", "[auto_placement]") {
  Workspace ws;
  std::map<std::string, TensorInfo> shapes;
  const auto net = ResidualNet(3, 8, &shapes);
  for (const auto& [name, info] : shapes) Feed(&ws, name, info.dims);
  const auto r = AutoPlace(net, shapes, BuiltinFallbackProfile(0));
  const RunProfile run = ProfileRun(ws.CreateNet(r.net));
  const auto cmp = ComparePrediction(r, run);
  REQUIRE(cmp.ops.size() == static_cast<size_t>(net.op_size()));
  for (const auto& row : cmp.ops) {
    CHECK(row.measured_us >= 0);
    CHECK(row.predicted_us > 0);
  }
  CHECK(cmp.measured_wall_us > 0);
  CHECK(cmp.ToText().find("total: predicted") != std::string::npos);
}
