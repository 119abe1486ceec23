// Solver operators: Iter, LearningRate (every policy), WeightedSum, MomentumSGDUpdate (plain and
// Nesterov), Adam, Adagrad, RmsProp, SumSqrElements / Sqrt / ClipTensorByScaling / Sign against
// double references on CPU; [gpu] the same on CUDA against CPU (skipped without a device).
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
void Near(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
}  // namespace

TEST_CASE("Iter increments an int64 counter in place, starting from 0 when empty", "[optim]") {
  Workspace ws;
  RunOp(ws, MakeOp("Iter", {}, {"it"}));
  CHECK(FetchVec<int64_t>(ws, "it") == std::vector<int64_t>{1});
  RunOp(ws, MakeOp("Iter", {"it"}, {"it"}));
  RunOp(ws, MakeOp("Iter", {"it"}, {"it"}));
  CHECK(FetchVec<int64_t>(ws, "it") == std::vector<int64_t>{3});
  Workspace bad;
  CHECK_THROWS_WITH(RunOp(bad, MakeOp("Iter", {"a"}, {"b"})), Catch::Contains("must run in place"));
}

TEST_CASE("LearningRate policies", "[optim]") {
  struct Case {
    std::vector<caffe2::Argument> args;
    std::function<double(int64_t)> ref;
  };
  std::vector<Case> cases = {
      {{ArgS("policy", "fixed")}, [](int64_t) { return 1.0; }},
      {{ArgS("policy", "step"), ArgI("stepsize", 3), ArgF("gamma", 0.5f)}, [](int64_t i) { return std::pow(0.5, i / 3); }},
      {{ArgS("policy", "exp"), ArgF("gamma", 0.9f)}, [](int64_t i) { return std::pow(0.9, i); }},
      {{ArgS("policy", "inv"), ArgF("gamma", 0.1f), ArgF("power", 0.75f)},
       [](int64_t i) { return std::pow(1 + 0.1 * i, -0.75); }},
      {{ArgS("policy", "multistep"), ArgInts("stepsizes", {2, 5}), ArgF("gamma", 0.1f)},
       [](int64_t i) { return std::pow(0.1, (i >= 2) + (i >= 5)); }},
      {{ArgS("policy", "poly"), ArgF("power", 2.f), ArgI("max_iter", 10)},
       [](int64_t i) { return std::pow(1 - i / 10.0, 2); }},
      {{ArgS("policy", "sigmoid"), ArgI("stepsize", 4), ArgF("gamma", 0.5f)},
       [](int64_t i) { return 1 / (1 + std::exp(0.5 * (i - 4))); }},
  };
  for (auto& c : cases) {
    auto args = c.args;
    args.push_back(ArgF("base_lr", -0.1f));
    for (int64_t it = 0; it < 8; ++it) {
      Workspace ws;
      Feed<int64_t>(ws, "it", {1}, {it});
      RunOp(ws, MakeOp("LearningRate", {"it"}, {"lr"}, args));
      INFO(args[0].s() << " iter " << it);
      Near(FetchVec<float>(ws, "lr"), {-0.1 * c.ref(it)});
    }
  }
  Workspace ws;
  Feed<int64_t>(ws, "it", {1}, {0});
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("LearningRate", {"it"}, {"lr"}, {ArgF("base_lr", 1.f), ArgS("policy", "x")})),
                    Catch::Contains("unknown policy 'x'"));
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("LearningRate", {"it"}, {"lr"}, {ArgS("policy", "fixed")})),
                    Catch::Contains("base_lr is required"));
}

TEST_CASE("WeightedSum, in place and not", "[optim]") {
  Workspace ws;
  Feed<float>(ws, "x", {3}, {1, 2, 3});
  Feed<float>(ws, "y", {3}, {10, 20, 30});
  Feed<float>(ws, "a", {1}, {2});
  Feed<float>(ws, "b", {1}, {-0.5f});
  RunOp(ws, MakeOp("WeightedSum", {"x", "a", "y", "b"}, {"z"}));
  Near(FetchVec<float>(ws, "z"), {-3, -6, -9});
  RunOp(ws, MakeOp("WeightedSum", {"x", "a", "y", "b"}, {"x"}));
  Near(FetchVec<float>(ws, "x"), {-3, -6, -9});
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("WeightedSum", {"x", "a", "y"}, {"z"})), Catch::Contains("pairs"));
}

TEST_CASE("MomentumSGDUpdate plain and Nesterov", "[optim]") {
  const auto g = RandomVec(9, 1), m = RandomVec(9, 2), p = RandomVec(9, 3);
  for (int nesterov : {0, 1}) {
    Workspace ws;
    Feed<float>(ws, "g", {9}, g);
    Feed<float>(ws, "m", {9}, m);
    Feed<float>(ws, "p", {9}, p);
    Feed<float>(ws, "lr", {1}, {0.05f});
    RunOp(ws, MakeOp("MomentumSGDUpdate", {"g", "m", "lr", "p"}, {"g", "m", "p"},
                     {ArgF("momentum", 0.9f), ArgI("nesterov", nesterov)}));
    std::vector<double> nm(9), ng(9), np(9);
    for (int i = 0; i < 9; ++i) {
      nm[i] = 0.9 * m[i] + 0.05 * g[i];
      ng[i] = nesterov ? 1.9 * nm[i] - 0.9 * m[i] : nm[i];
      np[i] = p[i] - ng[i];
    }
    Near(FetchVec<float>(ws, "m"), nm);
    Near(FetchVec<float>(ws, "g"), ng);
    Near(FetchVec<float>(ws, "p"), np);
  }
}

TEST_CASE("Adam, Adagrad, RmsProp against references", "[optim]") {
  const auto p = RandomVec(8, 4), g = RandomVec(8, 5), m1 = RandomVec(8, 6);
  const auto m2 = RandomVec(8, 7, 0.01f, 1.f);
  Workspace ws;
  Feed<float>(ws, "p", {8}, p);
  Feed<float>(ws, "g", {8}, g);
  Feed<float>(ws, "m1", {8}, m1);
  Feed<float>(ws, "m2", {8}, m2);
  Feed<float>(ws, "lr", {1}, {-0.01f});
  Feed<int64_t>(ws, "it", {1}, {2});
  RunOp(ws, MakeOp("Adam", {"p", "m1", "m2", "g", "lr", "it"}, {"p", "m1", "m2"}, {ArgF("epsilon", 1e-8f)}));
  const double corr = std::sqrt(1 - std::pow(0.999, 3)) / (1 - std::pow(0.9, 3));
  std::vector<double> w(8), a(8), b(8);
  for (int i = 0; i < 8; ++i) {
    a[i] = 0.9 * m1[i] + 0.1 * g[i];
    b[i] = 0.999 * m2[i] + 0.001 * g[i] * g[i];
    w[i] = p[i] - 0.01 * corr * a[i] / (std::sqrt(b[i]) + 1e-8);
  }
  Near(FetchVec<float>(ws, "m1"), a);
  Near(FetchVec<float>(ws, "m2"), b);
  Near(FetchVec<float>(ws, "p"), w);

  Feed<float>(ws, "p", {8}, p);
  Feed<float>(ws, "h", {8}, m2);
  RunOp(ws, MakeOp("Adagrad", {"p", "h", "g", "lr"}, {"p", "h"}, {ArgF("epsilon", 1e-4f)}));
  for (int i = 0; i < 8; ++i) {
    b[i] = m2[i] + g[i] * g[i];
    w[i] = p[i] - 0.01 * g[i] / (std::sqrt(b[i]) + 1e-4);
  }
  Near(FetchVec<float>(ws, "h"), b);
  Near(FetchVec<float>(ws, "p"), w);

  Feed<float>(ws, "ms", {8}, m2);
  Feed<float>(ws, "mom", {8}, m1);
  RunOp(ws, MakeOp("RmsProp", {"g", "ms", "mom", "lr"}, {"step", "ms", "mom"},
                   {ArgF("decay", 0.9f), ArgF("momentum", 0.5f), ArgF("epsilon", 1e-5f)}));
  for (int i = 0; i < 8; ++i) {
    b[i] = m2[i] + 0.1 * (g[i] * g[i] - m2[i]);
    a[i] = 0.5 * m1[i] - 0.01 * g[i] / std::sqrt(1e-5 + b[i]);
  }
  Near(FetchVec<float>(ws, "ms"), b);
  Near(FetchVec<float>(ws, "mom"), a);
  Near(FetchVec<float>(ws, "step"), a);
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Adagrad", {"p", "h", "g", "lr"}, {"q", "h"})), Catch::Contains("in place"));
}

TEST_CASE("Global-norm clipping ops: SumSqrElements, Sqrt, ClipTensorByScaling, Sign", "[optim]") {
  Workspace ws;
  Feed<float>(ws, "g", {4}, {3, -4, 0, 0});
  RunOp(ws, MakeOp("SumSqrElements", {"g"}, {"ss"}));
  CHECK(Fetch(ws, "ss").ndim() == 0);
  Near(FetchVec<float>(ws, "ss"), {25});
  RunOp(ws, MakeOp("Sqrt", {"ss"}, {"norm"}));
  Near(FetchVec<float>(ws, "norm"), {5});
  RunOp(ws, MakeOp("ClipTensorByScaling", {"g", "norm"}, {"c"}, {ArgF("threshold", 10.f)}));
  Near(FetchVec<float>(ws, "c"), {3, -4, 0, 0});  // norm under the threshold: unchanged
  RunOp(ws, MakeOp("ClipTensorByScaling", {"g", "norm"}, {"g"}, {ArgF("threshold", 1.f)}));
  Near(FetchVec<float>(ws, "g"), {0.6, -0.8, 0, 0});
  RunOp(ws, MakeOp("Sign", {"g"}, {"s"}));
  Near(FetchVec<float>(ws, "s"), {1, -1, 0, 0});
  RunOp(ws, MakeOp("SumSqrElements", {"g"}, {"avg"}, {ArgI("average", 1)}));
  Near(FetchVec<float>(ws, "avg"), {0.25});
}

TEST_CASE("GPU: optimizer ops match CPU", "[gpu][optim]") {
  if (SkipWithoutGpu()) return;
  const auto g = RandomVec(300, 1), m = RandomVec(300, 2), p = RandomVec(300, 3), h = RandomVec(300, 4, 0.1f, 1.f);
  auto T = [](const std::vector<float>& v) { return HostTensor<float>({static_cast<int64_t>(v.size())}, v); };
  const Tensor lr = HostTensor<float>({1}, {-0.01f});
  CompareCpuGpu(MakeOp("WeightedSum", {"p", "lr", "g", "lr"}, {"y"}), {{"p", T(p)}, {"g", T(g)}, {"lr", lr}});
  for (int nesterov : {0, 1})
    CompareCpuGpu(MakeOp("MomentumSGDUpdate", {"g", "m", "lr", "p"}, {"g", "m", "p"},
                         {ArgF("momentum", 0.9f), ArgI("nesterov", nesterov)}),
                  {{"g", T(g)}, {"m", T(m)}, {"lr", lr}, {"p", T(p)}});
  CompareCpuGpu(MakeOp("Adagrad", {"p", "h", "g", "lr"}, {"p", "h"}), {{"p", T(p)}, {"h", T(h)}, {"g", T(g)}, {"lr", lr}});
  CompareCpuGpu(MakeOp("RmsProp", {"g", "h", "m", "lr"}, {"g", "h", "m"}),
                {{"g", T(g)}, {"h", T(h)}, {"m", T(m)}, {"lr", lr}});
  CompareCpuGpu(MakeOp("SumSqrElements", {"g"}, {"s"}), {{"g", T(g)}}, 1e-3);
  CompareCpuGpu(MakeOp("Sqrt", {"h"}, {"s"}), {{"h", T(h)}});
  CompareCpuGpu(MakeOp("Sign", {"g"}, {"s"}), {{"g", T(g)}});
  CompareCpuGpu(MakeOp("StopGradient", {"g"}, {"s"}), {{"g", T(g)}});
  // Adam and LearningRate read the iteration on CPU.
  Workspace cpu, gpu;
  for (auto* w : {&cpu, &gpu}) {
    const Device d = w == &cpu ? Device::CPU() : Device::CUDA(0);
    Feed(*w, "p", T(p), d);
    Feed(*w, "m1", T(m), d);
    Feed(*w, "m2", T(h), d);
    Feed(*w, "g", T(g), d);
    Feed<int64_t>(*w, "it", {1}, {3});
    RunOp(*w, OnDevice(MakeOp("LearningRate", {"it"}, {"lr"}, {ArgF("base_lr", -0.01f), ArgS("policy", "fixed")}), d));
    RunOp(*w, OnDevice(MakeOp("Adam", {"p", "m1", "m2", "g", "lr", "it"}, {"p", "m1", "m2"}), d));
  }
  CHECK(Fetch(gpu, "lr").device() == Device::CPU());  // Fetch copies to host; the blob was on the GPU
  for (const char* n : {"p", "m1", "m2"}) {
    auto a = FetchVec<float>(cpu, n), b = FetchVec<float>(gpu, n);
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - b[i]) <= 1e-5f * std::max(1.f, std::abs(a[i])));
  }
  CHECK(gpu.GetBlob("lr")->GetTensor().device() == Device::CUDA(0));
}
