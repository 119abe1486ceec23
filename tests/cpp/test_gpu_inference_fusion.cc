// Inference rewrites of a net whose operators and weights are on a GPU (core/inference_fusion.h):
// batch norm folded there (FoldBatchNormWeights' CUDA kernel), the residual Add and Relu fused into
// cuDNN's Conv (operators/conv_op_cudnn.h), against the same net run as written; the fold runs again
// when a statistic changes. Needs a GPU: skips, saying so, without one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/net.h"
#include "core/operator.h"
#include "core/predictor.h"
#include "core/reduced_precision.h"
#include "core/workspace.h"
#include "test_util_io.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

std::vector<float> Random(int64_t n, unsigned seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(gen);
  return v;
}
void SetI(caffe2::OperatorDef* op, const std::string& name, int64_t v) {
  auto* a = op->add_arg();
  a->set_name(name);
  a->set_i(v);
}
void OnGpu(caffe2::NetDef* net) {
  for (auto& op : *net->mutable_op()) {
    op.mutable_device_option()->set_device_type(1);
    op.mutable_device_option()->set_device_id(0);
  }
}

// x -> Conv -> BN -> Relu -> Conv -> BN -> Add(x) -> Relu -> y (ResNet's basic block), c channels;
// the init net fills the weights on cuda:0, as an ONNX model imported for CUDA has them.
// choose_engine 0 keeps every Conv on cuDNN (else the first run may pick the default engine).
void ResidualBlock(int64_t c, bool bias, int choose_engine, caffe2::NetDef* init, caffe2::NetDef* net) {
  net->set_name("block");
  unsigned seed = 1;
  std::string x = "x";
  for (int k = 0; k < 2; ++k) {
    const std::string p = "c" + std::to_string(k);
    AddFill(init, p + "_w", {c, c, 3, 3}, Random(c * c * 9, seed++, -0.3f, 0.3f));
    std::vector<std::string> in{x, p + "_w"};
    if (bias) AddFill(init, p + "_b", {c}, Random(c, seed++, -0.5f, 0.5f)), in.push_back(p + "_b");
    auto* conv = AddOp(net, "Conv", in, {p});
    SetI(conv, "kernel", 3);
    SetI(conv, "pad", 1);
    if (choose_engine >= 0) SetI(conv, "choose_engine", choose_engine);
    AddFill(init, p + "_s", {c}, Random(c, seed++, 0.5f, 1.5f));
    AddFill(init, p + "_t", {c}, Random(c, seed++, -0.5f, 0.5f));
    AddFill(init, p + "_m", {c}, Random(c, seed++, -0.5f, 0.5f));
    AddFill(init, p + "_v", {c}, Random(c, seed++, 0.2f, 2.f));
    SetI(AddOp(net, "SpatialBN", {p, p + "_s", p + "_t", p + "_m", p + "_v"}, {p + "_bn"}), "is_test", 1);
    x = p + "_bn";
    if (k == 1) AddOp(net, "Add", {x, "x"}, {"sum"}), x = "sum";
    AddOp(net, "Relu", {x}, {k == 1 ? "y" : p + "_r"});
    x = p + "_r";
  }
  net->add_external_input("x");
  net->add_external_output("y");
  OnGpu(init);
  OnGpu(net);
}

caffe2::NetDef WithOptimize(caffe2::NetDef net, int v) {
  auto* a = net.add_arg();
  a->set_name("hetnet_optimize");
  a->set_i(v);
  return net;
}

std::vector<float> Fetch(Workspace& ws, const std::string& name) {
  return Values(ws.GetBlobOrThrow(name).GetTensor().To(Device::CPU()));
}
void FeedOnGpu(Workspace& ws, const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
  *ws.CreateBlob(name)->GetMutable<Tensor>() = FloatTensor(std::move(shape), v).To(Device::CUDA(0));
}

// Largest |a - b| over the largest |b| (at least 1).
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return worst / scale;
}

}  // namespace

TEST_CASE("GPU: BN folded on the GPU, residual Add and Relu fused into cuDNN's Conv, equal to the net as written",
          "[gpu][fusion]") {
  if (optest::SkipWithoutGpu()) return;
  for (int choose_engine : {0, -1}) {
    for (bool bias : {true, false}) {
      INFO("choose_engine " << choose_engine << ", bias " << bias);
      caffe2::NetDef init, net;
      ResidualBlock(16, bias, choose_engine, &init, &net);
      Workspace on, off;
      const std::vector<float> x = Random(2 * 16 * 9 * 9, 42, -1.f, 1.f);
      for (Workspace* ws : {&on, &off}) {
        ws->RunNetOnce(init);
        FeedOnGpu(*ws, "x", {2, 16, 9, 9}, x);
      }
      NetBase* fused = on.CreateNet(WithOptimize(net, 1));
      off.CreateNet(WithOptimize(net, 0));
      std::vector<std::string> types;
      int folds_on_gpu = 0, relu_fused = 0, residual_fused = 0;
      for (const auto& op : fused->def().op()) {
        types.push_back(op.type());
        if (op.type() == "FoldBatchNormWeights" && op.device_option().device_type() == 1) ++folds_on_gpu;
        for (const auto& a : op.arg()) {
          relu_fused += a.name() == "fused_activation" && a.s() == "Relu";
          residual_fused += a.name() == "fused_residual" && a.i() == 1;
        }
      }
      CAPTURE(types);
      CHECK(folds_on_gpu == 2);
      CHECK(relu_fused == 2);
      CHECK(residual_fused == 1);
      CHECK(std::count(types.begin(), types.end(), "SpatialBN") == 0);
      CHECK(std::count(types.begin(), types.end(), "Relu") == 0);
      CHECK(std::count(types.begin(), types.end(), "Add") == 0);
      for (int run = 0; run < 3; ++run) {  // the first run folds; later ones find the fold up to date
        on.RunNet("block");
        off.RunNet("block");
        CHECK(RelativeError(Fetch(on, "y"), Fetch(off, "y")) < 1e-4);
      }
      // A statistic fed after creation: folded again, on the GPU.
      const std::vector<float> scale = Random(16, 77, 2.f, 3.f);
      for (Workspace* ws : {&on, &off}) FeedOnGpu(*ws, "c1_s", {16}, scale);
      on.RunNet("block");
      off.RunNet("block");
      const auto y_on = Fetch(on, "y"), y_off = Fetch(off, "y");
      CHECK(RelativeError(y_on, y_off) < 1e-4);
      CHECK(*std::max_element(y_off.begin(), y_off.end()) > 0.5f);  // not all zeros after the Relu
    }
  }
}

TEST_CASE("GPU: Predictors fed GPU tensors run the fused block and equal the net as written",
          "[gpu][fusion][predictor]") {
  if (optest::SkipWithoutGpu()) return;
  // A Predictor assumes CPU inputs at creation; a GPU input re-creates its instance's net for that
  // device, with the input present but empty (it must not be taken for a weight). float16 is asked of
  // one: its convolutions run in float16 channels-last with float32 accumulation (measured on an
  // H200: 4.7-5.3e-4 from float32, float16's own rounding), the others in float32 (1e-4).
  caffe2::NetDef init, net;
  ResidualBlock(32, true, 0, &init, &net);
  caffe2::NetDef half_net = WithOptimize(net, 1), plain_net = WithOptimize(net, 0);
  SetNetPrecision(&half_net, DataType::Float16);
  Predictor fused(init, WithOptimize(net, 1)), half(init, half_net), plain(init, plain_net);
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run);
    const Tensor x = FloatTensor({4, 32, 12, 12}, Random(4 * 32 * 144, 5 + run, -1.f, 1.f)).To(Device::CUDA(0));
    const Tensor want = plain.Run({{"x", x}}).at("y");
    for (const Predictor* p : {&fused, &half}) {
      const Tensor got = p->Run({{"x", x}}).at("y");
      REQUIRE(got.dtype() == DataType::Float);
      CHECK(RelativeError(Values(got.To(Device::CPU())), Values(want.To(Device::CPU()))) < (p == &half ? 3e-3 : 1e-4));
    }
  }
  int types_left = 0;  // SpatialBN, Add, Relu: all folded or fused
  // The report held by name: a range-for over placed_net.op() of the temporary would read it after
  // its destruction (op() is a call, so the temporary's life is not extended; SIGSEGV on the H200).
  const PlacementReport placement = fused.Placement();
  for (const auto& op : placement.placed_net.op())
    types_left += op.type() == "SpatialBN" || op.type() == "Add" || op.type() == "Relu";
  CHECK(types_left == 0);
}

TEST_CASE("GPU: a CUDA graph with BN folded on the GPU folds again when a statistic is rewritten in place",
          "[gpu][fusion][cuda_graph]") {
  if (optest::SkipWithoutGpu()) return;
  caffe2::NetDef init, net;
  ResidualBlock(16, true, 0, &init, &net);
  caffe2::NetDef graph_net = WithOptimize(net, 1);
  graph_net.set_type("cuda_graph");
  Workspace on, off;
  const std::vector<float> x = Random(2 * 16 * 9 * 9, 43, -1.f, 1.f);
  for (Workspace* ws : {&on, &off}) {
    ws->RunNetOnce(init);
    FeedOnGpu(*ws, "x", {2, 16, 9, 9}, x);
  }
  NetBase* graph = on.CreateNet(graph_net);
  off.CreateNet(WithOptimize(net, 0));
  for (int run = 0; run < 3; ++run) {  // eager, captured, replayed
    on.RunNet("block");
    off.RunNet("block");
    CHECK(RelativeError(Fetch(on, "y"), Fetch(off, "y")) < 1e-4);
  }
  CHECK(graph->ExecutorNotes().find("replayed as one graph") != std::string::npos);
  // The same storage, new values (a write generation): the fold must run again, not be replayed.
  const Tensor scale = FloatTensor({16}, Random(16, 78, 2.f, 3.f));
  for (Workspace* ws : {&on, &off}) {
    Tensor* s = ws->GetMutableBlob("c1_s")->GetMutable<Tensor>();
    const void* before = s->raw_data();
    s->CopyFrom(scale);
    REQUIRE(s->raw_data() == before);
  }
  for (int run = 0; run < 3; ++run) {
    on.RunNet("block");
    off.RunNet("block");
    CHECK(RelativeError(Fetch(on, "y"), Fetch(off, "y")) < 1e-4);
  }
}
