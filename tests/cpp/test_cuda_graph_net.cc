// The CUDA graph executor (net type "cuda_graph", device/cuda/cuda_graph_net.cc): the same outputs as
// the sequential executor, run after run and across a shape change, with its notes saying what it
// captured. The GPU cases skip, visibly, without a GPU; the CPU case needs a build with CUDA.
#include <catch2/catch.hpp>

#include <random>

#include "core/net.h"
#include "core/npy.h"
#include "core/proto_io.h"
#include "core/workspace.h"
#include "test_util_io.h"

#ifndef HETNET_CLI_PATH
#error "tests/CMakeLists.txt must define HETNET_CLI_PATH (the hetnet_cli binary)"
#endif

using namespace hetnet;

namespace {

caffe2::OperatorDef* Op(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                        std::vector<std::string> out, int gpu) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  if (gpu >= 0) {
    op->mutable_device_option()->set_device_type(1);
    op->mutable_device_option()->set_device_id(gpu);
  }
  return op;
}

// data (fed on the CPU) -> FC -> Relu -> FC -> Softmax, the four on `gpu` (< 0: the CPU); with
// `fill`, a UniformFill on the same device between the Relu and the second FC (random: never replayed).
caffe2::NetDef Mlp(const std::string& type, int gpu, bool fill = false) {
  caffe2::NetDef net;
  net.set_name("mlp_" + (type.empty() ? std::string("simple") : type));
  net.set_type(type);
  Op(&net, "FC", {"data", "w1", "b1"}, {"h"}, gpu);
  Op(&net, "Relu", {"h"}, {"r"}, gpu);
  if (fill) {
    auto* f = Op(&net, "UniformFill", {}, {"noise"}, gpu);
    auto* a = f->add_arg();
    a->set_name("shape");
    a->add_ints(4);
  }
  Op(&net, "FC", {"r", "w2", "b2"}, {"o"}, gpu);
  Op(&net, "Softmax", {"o"}, {"prob"}, gpu);
  for (auto n : {"data", "w1", "b1", "w2", "b2"}) net.add_external_input(n);
  net.add_external_output("prob");
  return net;
}

void FeedRandom(Workspace* ws, const std::string& name, std::vector<int64_t> shape, unsigned seed) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  float* p = t->mutable_data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = u(rng);
}

void FeedWeights(Workspace* ws) {
  FeedRandom(ws, "w1", {32, 20}, 1);
  FeedRandom(ws, "b1", {32}, 2);
  FeedRandom(ws, "w2", {10, 32}, 3);
  FeedRandom(ws, "b2", {10}, 4);
}

std::vector<float> Fetch(const Workspace& ws, const std::string& name) {
  Tensor t = ws.GetBlobOrThrow(name).GetTensor().To(Device::CPU());
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// Runs both nets `runs` times on new data of `batch` rows each run; outputs must be equal.
void RunBoth(Workspace* simple_ws, NetBase* simple, Workspace* graph_ws, NetBase* graph, int64_t batch, int runs,
             unsigned seed) {
  for (int run = 0; run < runs; ++run) {
    FeedRandom(simple_ws, "data", {batch, 20}, seed + run);
    FeedRandom(graph_ws, "data", {batch, 20}, seed + run);
    simple->Run();
    graph->Run();
    INFO("run " << run << ", batch " << batch);
    const auto a = Fetch(*simple_ws, "prob"), b = Fetch(*graph_ws, "prob");
    REQUIRE(a.size() == static_cast<size_t>(batch * 10));
    CHECK(a == b);
  }
}

// With a visible reason: this build has no cuda_graph executor / this machine no GPU.
bool SkippedWithoutExecutor() {
  if (NetRegistry::Find("cuda_graph")) return false;
  WARN("skipped: this build has no CUDA, so no cuda_graph executor");
  return true;
}
bool SkippedWithoutGpu() {
  if (NumCudaDevices() > 0) return false;
  WARN("skipped: no CUDA device on this machine (NumCudaDevices() == 0)");
  return true;
}

// The same MLP in two workspaces with the same weights: as written (sequential executor) and as a
// cuda_graph net.
struct TwoNets {
  Workspace a, b;
  NetBase* simple;
  NetBase* graph;
  TwoNets(int gpu, bool fill = false) {
    for (Workspace* ws : {&a, &b}) {
      FeedWeights(ws);
      FeedRandom(ws, "data", {2, 20}, 9);
    }
    simple = a.CreateNet(Mlp("", gpu, fill));
    graph = b.CreateNet(Mlp("cuda_graph", gpu, fill));
  }
  void Run(int64_t batch, int runs, unsigned seed) { RunBoth(&a, simple, &b, graph, batch, runs, seed); }
};

}  // namespace

TEST_CASE("cuda graph executor: a CPU net runs as the sequential one and says nothing was captured",
          "[cuda_graph]") {
  if (SkippedWithoutExecutor()) return;
  TwoNets n(-1);
  CHECK_THAT(n.graph->ExecutorNotes(), Catch::Contains("nothing captured yet"));
  n.Run(3, 3, 20);
  n.Run(5, 2, 40);
  CHECK_THAT(n.graph->ExecutorNotes(), Catch::Contains("0 of 4 operators") && Catch::Contains("no operator runs on a GPU"));
  CHECK(n.simple->ExecutorNotes().empty());
}

TEST_CASE("cli: run --cuda-graph gives the same output and prints the executor's notes", "[cuda_graph][cli]") {
  if (SkippedWithoutExecutor()) return;
  hetnet_test::TempDir dir;
  caffe2::NetDef init_net, predict_net;
  hetnet_test::MakeMlp(&init_net, &predict_net);
  const std::string init = dir.File("init.pb"), predict = dir.File("predict.pb"), data = dir.File("data.npy");
  WriteProtoToFile(init, init_net);
  WriteProtoToFile(predict, predict_net);
  WriteNpy(data, hetnet_test::FloatTensor({2, 4}, {1, 2, 3, 4, -1, -2, 0.5f, 0}));
  const std::string base = std::string("'") + HETNET_CLI_PATH + "' run --init " + init + " --predict " + predict +
                           " --input data=" + data + " --iters 3 --output prob=";
  const auto plain = hetnet_test::RunCommand(base + dir.File("a.npy"), dir);
  const auto graph = hetnet_test::RunCommand(base + dir.File("b.npy") + " --cuda-graph", dir);
  INFO(graph.err);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(graph.exit_code == 0);
  CHECK_THAT(graph.out, Catch::Contains("cuda graph: 0 of"));
  CHECK(hetnet_test::Values(ReadNpy(dir.File("a.npy"))) == hetnet_test::Values(ReadNpy(dir.File("b.npy"))));
}

TEST_CASE("GPU: cuda graph executor replays the GPU segment with the sequential executor's outputs",
          "[gpu][cuda_graph]") {
  if (SkippedWithoutGpu()) return;
  TwoNets n(0);
  n.Run(16, 5, 100);
  INFO(n.graph->ExecutorNotes());
  CHECK_THAT(n.graph->ExecutorNotes(), Catch::Contains("replayed as one graph (captured 1x)"));
  // Another batch size: the tensors change shape, the segment runs eagerly once and is captured again.
  n.Run(8, 4, 200);
  CHECK_THAT(n.graph->ExecutorNotes(), Catch::Contains("replayed as one graph (captured 2x)"));
}

TEST_CASE("GPU: cuda graph executor keeps a random fill out of its segments and says why", "[gpu][cuda_graph]") {
  if (SkippedWithoutGpu()) return;
  TwoNets n(0, /*fill=*/true);
  n.Run(4, 4, 300);
  const std::string notes = n.graph->ExecutorNotes();
  INFO(notes);
  CHECK_THAT(notes, Catch::Contains("(UniformFill) its type cannot be replayed"));
  CHECK_THAT(notes, Catch::Contains("replayed as 2 segment(s)"));
  // The fill still runs every time: its output changes from run to run.
  const auto n1 = Fetch(n.b, "noise");
  n.graph->Run();
  CHECK(Fetch(n.b, "noise") != n1);
}
