// Inference rewrites at net creation (core/inference_fusion.h): each rewrite on small nets compared
// with the same net run as written (hetnet_optimize=0), the op lists, and every case that must not
// be rewritten.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "core/inference_fusion.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/predictor.h"
#include "core/workspace.h"
#include "operators/conv_winograd_f43.h"
#include "operators/fold_batch_norm_op.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

std::vector<float> Random(int64_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}
int64_t Numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
void Fill(caffe2::NetDef* init, const std::string& name, std::vector<int64_t> shape, unsigned seed, float lo = -1.f,
          float hi = 1.f) {
  AddFill(init, name, shape, Random(Numel(shape), seed, lo, hi));
}
void AddArgI(caffe2::OperatorDef* op, const std::string& n, int64_t v) {
  auto* a = op->add_arg();
  a->set_name(n);
  a->set_i(v);
}
caffe2::OperatorDef* AddBN(caffe2::NetDef* net, caffe2::NetDef* init, const std::string& x, const std::string& y,
                           int64_t channels, unsigned seed) {
  const std::string p = y + "_";
  Fill(init, p + "s", {channels}, seed, 0.5f, 1.5f);
  Fill(init, p + "b", {channels}, seed + 1);
  Fill(init, p + "m", {channels}, seed + 2);
  Fill(init, p + "v", {channels}, seed + 3, 0.2f, 2.f);
  auto* bn = AddOp(net, "SpatialBN", {x, p + "s", p + "b", p + "m", p + "v"}, {y});
  AddArgI(bn, "is_test", 1);
  return bn;
}
caffe2::OperatorDef* AddConv(caffe2::NetDef* net, caffe2::NetDef* init, const std::string& x, const std::string& y,
                             int64_t c, int64_t m, bool bias, unsigned seed) {
  Fill(init, y + "_w", {m, c, 3, 3}, seed);
  std::vector<std::string> in = {x, y + "_w"};
  if (bias) {
    Fill(init, y + "_bias", {m}, seed + 1);
    in.push_back(y + "_bias");
  }
  auto* op = AddOp(net, "Conv", in, {y});
  AddArgI(op, "kernel", 3);
  AddArgI(op, "pad", 1);
  return op;
}
caffe2::OperatorDef* AddFC(caffe2::NetDef* net, caffe2::NetDef* init, const std::string& type, const std::string& x,
                           const std::string& y, int64_t k, int64_t n, unsigned seed) {
  Fill(init, y + "_w", type == "FC" ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, seed);
  Fill(init, y + "_bias", {n}, seed + 1);
  return AddOp(net, type, {x, y + "_w", y + "_bias"}, {y});
}

// hetnet_optimize = v on the net (replacing the argument when present).
void SetOptimize(caffe2::NetDef* net, int v) {
  for (auto& a : *net->mutable_arg())
    if (a.name() == "hetnet_optimize") return a.set_i(v);
  auto* a = net->add_arg();
  a->set_name("hetnet_optimize");
  a->set_i(v);
}

// An inference model: its net asks for the rewrite (as a Predictor's does).
struct Model {
  Model() { SetOptimize(&net, 1); }
  caffe2::NetDef init, net;
  std::string input = "x";
  std::vector<int64_t> input_shape;
};

// A workspace with the init net run and the input fed.
void Prepare(const Model& m, Workspace* ws) {
  ws->RunNetOnce(m.init);
  *ws->CreateBlob(m.input)->GetMutable<Tensor>() = FloatTensor(m.input_shape, Random(Numel(m.input_shape), 99));
}

struct Outcome {
  caffe2::NetDef rewritten;               // the net as created with the pass on
  std::vector<std::string> types;         // its op types
  PlacementReport placement;
};

// Creates and runs m.net with the pass on and (in another workspace) off; every external output
// must agree to 1e-5 relative to the magnitude of the reference.
Outcome RunBoth(const Model& m) {
  Workspace on, off;
  Prepare(m, &on);
  Prepare(m, &off);
  caffe2::NetDef plain = m.net;
  SetOptimize(&plain, 0);
  NetBase* n_on = on.CreateNet(m.net);
  NetBase* n_off = off.CreateNet(plain);
  REQUIRE(n_off->def().op_size() == m.net.op_size());  // off: as written
  on.RunNet(m.net.name());
  off.RunNet(m.net.name());
  for (const auto& name : m.net.external_output()) {
    INFO("output " << name);
    const Tensor& got = on.GetBlobOrThrow(name).GetTensor();
    const Tensor& want = off.GetBlobOrThrow(name).GetTensor();
    REQUIRE(got.shape() == want.shape());
    const auto g = Values(got), w = Values(want);
    float scale = 1.f;
    for (float v : w) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < w.size(); ++i) REQUIRE(std::fabs(g[i] - w[i]) <= 1e-5f * scale);
  }
  Outcome o;
  o.rewritten = n_on->def();
  for (const auto& op : o.rewritten.op()) o.types.push_back(op.type());
  o.placement = n_on->placement();
  return o;
}

std::string Arg(const caffe2::OperatorDef& op, const std::string& name) {
  for (const auto& a : op.arg())
    if (a.name() == name) return a.s();
  return "";
}
void SetEngine(caffe2::NetDef* net, const std::string& engine) {
  for (auto& op : *net->mutable_op())
    if (op.type() == "Conv" || op.type() == "FC" || op.type() == "FCTransposed") op.set_engine(engine);
}

Model ConvBnModel(bool bias) {
  Model m;
  m.net.set_name("conv_bn");
  m.input_shape = {2, 3, 6, 5};
  AddConv(&m.net, &m.init, "x", "c1", 3, 4, bias, 1);
  AddBN(&m.net, &m.init, "c1", "bn1", 4, 10);
  m.net.add_external_output("bn1");
  return m;
}

}  // namespace

TEST_CASE("BN folds into Conv with and without bias; the user's weights are untouched", "[fusion]") {
  for (bool bias : {true, false}) {
    INFO("bias " << bias);
    Model m = ConvBnModel(bias);
    Outcome o = RunBoth(m);
    REQUIRE(o.types == std::vector<std::string>{"FoldBatchNormWeights", "Conv"});
    const auto& conv = o.rewritten.op(1);
    REQUIRE(conv.input_size() == 3);
    CHECK(conv.input(1) == "c1_w_bn_folded");
    CHECK(conv.input(2) == (bias ? "c1_bias_bn_folded_bias" : "c1_w_bn_folded_bias"));
    CHECK(conv.output(0) == "bn1");
    // The original filter still holds the init net's values.
    Workspace ws;
    Prepare(m, &ws);
    const auto before = Values(ws.GetBlobOrThrow("c1_w").GetTensor());
    ws.CreateNet(m.net);
    ws.RunNet(m.net.name());
    CHECK(Values(ws.GetBlobOrThrow("c1_w").GetTensor()) == before);
    CHECK(ws.GetBlob("c1_w_bn_folded") != nullptr);
  }
}

TEST_CASE("BN folding follows weights and statistics written after the net was created", "[fusion]") {
  Model m = ConvBnModel(true);
  Workspace on, off;
  Prepare(m, &on);
  Prepare(m, &off);
  caffe2::NetDef plain = m.net;
  SetOptimize(&plain, 0);
  on.CreateNet(m.net);
  off.CreateNet(plain);
  auto compare = [&] {
    on.RunNet(m.net.name());
    off.RunNet(m.net.name());
    const auto g = Values(on.GetBlobOrThrow("bn1").GetTensor()), w = Values(off.GetBlobOrThrow("bn1").GetTensor());
    REQUIRE(g.size() == w.size());
    float scale = 1.f;
    for (float v : w) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < w.size(); ++i) REQUIRE(std::fabs(g[i] - w[i]) <= 1e-5f * scale);
  };
  compare();
  const auto folded_before = Values(on.GetBlobOrThrow("c1_w_bn_folded").GetTensor());
  const uint64_t generation = on.GetBlobOrThrow("c1_w_bn_folded").GetTensor().write_generation();
  compare();  // nothing changed: the fold is not redone
  CHECK(on.GetBlobOrThrow("c1_w_bn_folded").GetTensor().write_generation() == generation);
  // Every BN input and the filter, each written in place in both workspaces after creation.
  for (const std::string name : {"c1_w", "c1_bias", "bn1_s", "bn1_b", "bn1_m", "bn1_v"}) {
    INFO(name);
    for (Workspace* ws : {&on, &off}) {
      Tensor* t = ws->GetMutableBlob(name)->GetMutable<Tensor>();
      float* p = t->mutable_data<float>();
      for (int64_t i = 0; i < t->numel(); ++i) p[i] = p[i] * 1.25f + 0.125f;
    }
    compare();
  }
  CHECK(Values(on.GetBlobOrThrow("c1_w_bn_folded").GetTensor()) != folded_before);
}

TEST_CASE("BN folds into FC", "[fusion]") {
  Model m;
  m.net.set_name("fc_bn");
  m.input_shape = {3, 6};
  AddFC(&m.net, &m.init, "FC", "x", "f1", 6, 5, 1);
  AddBN(&m.net, &m.init, "f1", "bn1", 5, 20);
  m.net.add_external_output("bn1");
  Outcome o = RunBoth(m);
  CHECK(o.types == std::vector<std::string>{"FoldBatchNormWeights", "FC"});
  CHECK(o.rewritten.op(1).input(1) == "f1_w_bn_folded");
}

TEST_CASE("Conv+Relu, FC+Relu, FCTransposed+Relu fuse on the default engine", "[fusion]") {
  for (const std::string type : {"Conv", "FC", "FCTransposed"}) {
    INFO(type);
    Model m;
    m.net.set_name("act");
    if (type == "Conv") {
      m.input_shape = {2, 3, 5, 5};
      AddConv(&m.net, &m.init, "x", "y", 3, 4, true, 3);
    } else {
      m.input_shape = {4, 7};
      AddFC(&m.net, &m.init, type, "x", "y", 7, 6, 3);
    }
    AddOp(&m.net, "Relu", {"y"}, {"r"});
    AddOp(&m.net, "Sigmoid", {"r"}, {"out"});
    m.net.add_external_output("out");
    SetEngine(&m.net, "EIGEN");  // the default kernels
    Outcome o = RunBoth(m);
    REQUIRE(o.types == std::vector<std::string>{type, "Sigmoid"});
    CHECK(Arg(o.rewritten.op(0), "fused_activation") == "Relu");
    CHECK(o.rewritten.op(0).output(0) == "r");
    CHECK(o.placement.ops.size() == 2);
    CHECK(o.placement.ToText().find("Relu fused") != std::string::npos);
  }
}

TEST_CASE("Conv+BN+Relu becomes one Conv; in-place Relu too", "[fusion]") {
  for (bool inplace : {false, true}) {
    Model m = ConvBnModel(true);
    m.net.clear_external_output();
    AddOp(&m.net, "Relu", {"bn1"}, {inplace ? "bn1" : "r"});
    m.net.add_external_output(inplace ? "bn1" : "r");
    SetEngine(&m.net, "EIGEN");
    Outcome o = RunBoth(m);
    REQUIRE(o.types == std::vector<std::string>{"FoldBatchNormWeights", "Conv"});
    CHECK(Arg(o.rewritten.op(1), "fused_activation") == "Relu");
    const std::string text = o.placement.ToText();
    CHECK(text.find("BN folded") != std::string::npos);
    CHECK(text.find("Relu fused") != std::string::npos);
  }
}

TEST_CASE("Relu fusion follows the engines that honour fused_activation", "[fusion]") {
  caffe2::OperatorDef probe;
  probe.set_type("Conv");
  probe.set_engine("DNNL");
  const std::string engine = ResolveEngine(probe, Device::CPU());
  Model m;
  m.net.set_name("dnnl");
  m.input_shape = {1, 3, 5, 5};
  AddConv(&m.net, &m.init, "x", "y", 3, 2, true, 5);
  AddOp(&m.net, "Relu", {"y"}, {"r"});
  m.net.add_external_output("r");
  SetEngine(&m.net, "DNNL");
  Outcome o = RunBoth(m);  // equal outputs either way
  const bool fused = EnginesWithFusedActivation().count(engine) > 0;
  CHECK(o.types.size() == (fused ? 1u : 2u));
}

TEST_CASE("Dropout with is_test=1 is removed; in place too; kept when its output is fetched", "[fusion]") {
  Model m;
  m.net.set_name("drop");
  m.input_shape = {4, 6};
  AddOp(&m.net, "Sigmoid", {"x"}, {"s"});
  AddArgI(AddOp(&m.net, "Dropout", {"s"}, {"d"}), "is_test", 1);
  AddOp(&m.net, "Tanh", {"d"}, {"t"});
  AddOp(&m.net, "Mul", {"d", "t"}, {"u"});
  AddArgI(AddOp(&m.net, "Dropout", {"u"}, {"u"}), "is_test", 1);  // in place
  AddArgI(AddOp(&m.net, "Dropout", {"u"}, {"kept"}), "is_test", 1);  // fetched: kept
  m.net.add_external_output("kept");
  Outcome o = RunBoth(m);
  REQUIRE(o.types == std::vector<std::string>{"Sigmoid", "Tanh", "Mul", "Dropout"});
  CHECK(o.rewritten.op(1).input(0) == "s");
  CHECK(o.rewritten.op(2).input(0) == "s");
  CHECK(o.rewritten.op(3).output(0) == "kept");
}

TEST_CASE("a Dropout whose output nothing reads is a result: kept, even undeclared", "[fusion]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1.f, -2.f});
  caffe2::OperatorDef op;
  op.set_type("Dropout");
  op.add_input("x");
  op.add_output("y");
  auto* a = op.add_arg();
  a->set_name("is_test");
  a->set_i(1);
  ws.RunOperatorOnce(op);  // a one-op net with no external outputs
  CHECK(Values(ws.GetBlobOrThrow("y").GetTensor()) == std::vector<float>{1.f, -2.f});
}

TEST_CASE("StopGradient / Copy of an intermediate blob removed: its writer writes the copy's output",
          "[fusion]") {
  Model m;
  m.net.set_name("identity");
  m.input_shape = {3, 5};
  AddOp(&m.net, "Sigmoid", {"x"}, {"s"});
  AddOp(&m.net, "StopGradient", {"s"}, {"prob"});  // ONNX's Identity at a graph output
  AddOp(&m.net, "Tanh", {"s"}, {"t"});            // another reader of s: reads prob
  AddOp(&m.net, "Copy", {"t"}, {"t2"});
  AddOp(&m.net, "Relu", {"t2"}, {"r"});
  AddOp(&m.net, "StopGradient", {"x"}, {"xin"});  // the net's input: kept
  AddOp(&m.net, "Mul", {"r", "xin"}, {"u"});
  AddOp(&m.net, "Copy", {"u"}, {"kept"});         // u is also a declared output: kept
  for (const char* out : {"prob", "t2", "u", "kept"}) m.net.add_external_output(out);
  Outcome o = RunBoth(m);
  REQUIRE(o.types == std::vector<std::string>{"Sigmoid", "Tanh", "Relu", "StopGradient", "Mul", "Copy"});
  CHECK(o.rewritten.op(0).output(0) == "prob");
  CHECK(o.rewritten.op(1).input(0) == "prob");
  CHECK(o.rewritten.op(1).output(0) == "t2");
  CHECK(o.rewritten.op(2).input(0) == "t2");
  SECTION("the copy's output read before the copy: kept") {
    Model k;
    k.net.set_name("identity_kept");
    k.input_shape = {4};
    AddOp(&k.net, "Sigmoid", {"x"}, {"s"});
    AddOp(&k.net, "Tanh", {"y"}, {"early"});  // reads y's value from before this net's write
    AddOp(&k.net, "StopGradient", {"s"}, {"y"});
    k.net.add_external_output("y");
    Workspace ws;
    Prepare(k, &ws);
    *ws.CreateBlob("y")->GetMutable<Tensor>() = FloatTensor({4}, {1.f, 2.f, 3.f, 4.f});
    NetBase* net = ws.CreateNet(k.net);
    std::vector<std::string> types;
    for (const auto& op : net->def().op()) types.push_back(op.type());
    CHECK(types == std::vector<std::string>{"Sigmoid", "Tanh", "StopGradient"});
  }
}

TEST_CASE("what must not be rewritten", "[fusion]") {
  SECTION("the Conv output is an external output") {
    Model m = ConvBnModel(true);
    m.net.add_external_output("c1");
    CHECK(RunBoth(m).types == std::vector<std::string>{"Conv", "SpatialBN"});
  }
  SECTION("the BN output is fetched: BN folds, the Relu is not fused into it") {
    Model m = ConvBnModel(true);
    m.net.clear_external_output();
    AddOp(&m.net, "Relu", {"bn1"}, {"r"});
    m.net.add_external_output("r");
    m.net.add_external_output("bn1");  // the BN output too: BN folds, Relu stays
    SetEngine(&m.net, "EIGEN");
    CHECK(RunBoth(m).types == std::vector<std::string>{"FoldBatchNormWeights", "Conv", "Relu"});
  }
  SECTION("the Conv output has a second reader") {
    Model m = ConvBnModel(true);
    AddOp(&m.net, "Sigmoid", {"c1"}, {"sg"});
    m.net.add_external_output("sg");
    CHECK(RunBoth(m).types == std::vector<std::string>{"Conv", "SpatialBN", "Sigmoid"});
  }
  SECTION("the BN statistics are written by the net") {
    Model m = ConvBnModel(true);
    caffe2::NetDef net;
    net.set_name(m.net.name());
    AddOp(&net, "Copy", {"bn1_v"}, {"var2"});
    auto* op = net.add_op();
    *op = m.net.op(0);
    *net.add_op() = m.net.op(1);
    net.mutable_op(2)->set_input(4, "var2");
    net.add_external_output("bn1");
    m.net = net;
    CHECK(RunBoth(m).types == std::vector<std::string>{"Copy", "Conv", "SpatialBN"});
  }
  SECTION("a training net (a gradient op) is left as written") {
    Model m = ConvBnModel(true);
    AddOp(&m.net, "ConstantFill", {"bn1"}, {"bn1_grad"});
    AddOp(&m.net, "ReluGradient", {"bn1", "bn1_grad"}, {"g"});
    CHECK(InferenceRewriteBlocker(m.net).find("training") != std::string::npos);
    CHECK(RunBoth(m).types.size() == 4);
  }
  SECTION("BN with is_test=0 marks a training net") {
    Model m = ConvBnModel(true);
    CHECK(InferenceRewriteBlocker(m.net).empty());
    m.net.mutable_op(1)->mutable_arg(0)->set_i(0);
    CHECK_FALSE(InferenceRewriteBlocker(m.net).empty());
  }
  SECTION("hetnet_optimize=0 and the process switch") {
    Model m = ConvBnModel(true);
    Workspace ws;
    Prepare(m, &ws);
    caffe2::NetDef off = m.net;
    SetOptimize(&off, 0);
    CHECK(ws.CreateNet(off)->def().op_size() == 2);
    DefaultInferenceFusionOptions().enabled = false;
    const int n = ws.CreateNet(m.net, true)->def().op_size();
    DefaultInferenceFusionOptions().enabled = true;
    CHECK(n == 2);
    CHECK(ws.CreateNet(m.net, true)->def().op_size() == 2);
  }
}

TEST_CASE("no rewrite across devices or across a blob another net reads", "[fusion]") {
  Model m = ConvBnModel(true);
  AddOp(&m.net, "Relu", {"bn1"}, {"r"});
  m.net.clear_external_output();
  m.net.add_external_output("r");
  SetEngine(&m.net, "EIGEN");
  Workspace ws;
  Prepare(m, &ws);
  SECTION("the Relu on another device (rewrite previewed: no GPU here)") {
    DeviceToOption(Device::CUDA(0), m.net.mutable_op(2)->mutable_device_option());
    auto r = RewriteForInference(m.net, &ws);
    std::vector<std::string> types;
    for (const auto& op : r.net.op()) types.push_back(op.type());
    CHECK(types == std::vector<std::string>{"FoldBatchNormWeights", "Conv", "Relu"});  // BN folded (both on CPU), Relu not fused
    CHECK(ws.GetBlob("c1_w_bn_folded") == nullptr);           // a preview stores nothing
  }
  SECTION("another net of the workspace reads the BN output") {
    caffe2::NetDef reader;
    reader.set_name("reader");
    AddOp(&reader, "Sigmoid", {"bn1"}, {"other"});
    *ws.CreateBlob("bn1")->GetMutable<Tensor>() = FloatTensor({1}, {0.f});
    ws.CreateNet(reader);
    CHECK(ws.CreateNet(m.net)->def().op_size() == 3);  // BN folded, Relu kept: bn1 is read by "reader"
  }
}

TEST_CASE("re-creating a net gives fresh folded blobs; results stay equal", "[fusion]") {
  Model m = ConvBnModel(false);
  Workspace ws;
  Prepare(m, &ws);
  ws.CreateNet(m.net);
  ws.RunNet(m.net.name());
  const auto first = Values(ws.GetBlobOrThrow("bn1").GetTensor());
  NetBase* again = ws.CreateNet(m.net, /*overwrite=*/true);
  CHECK(again->def().op(1).input(1) == "c1_w_bn_folded_1");  // the replaced net may still read the first
  ws.RunNet(m.net.name());
  CHECK(Values(ws.GetBlobOrThrow("bn1").GetTensor()) == first);
}

TEST_CASE("a Predictor runs the rewritten predict net", "[fusion][predictor]") {
  Model m = ConvBnModel(true);
  AddOp(&m.net, "Relu", {"bn1"}, {"r"});
  m.net.clear_external_output();
  m.net.add_external_output("r");
  m.net.add_external_input("x");
  Predictor p(m.init, m.net);
  const Tensor x = FloatTensor(m.input_shape, Random(Numel(m.input_shape), 99));
  auto out = p.Run(Predictor::TensorMap{{"x", x}});
  Workspace ref;
  Prepare(m, &ref);
  caffe2::NetDef plain = m.net;
  SetOptimize(&plain, 0);
  ref.RunNetOnce(plain);
  const auto want = Values(ref.GetBlobOrThrow("r").GetTensor());
  const auto got = Values(out.at("r"));
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= 1e-5f * std::max(1.f, std::fabs(want[i])));
}

TEST_CASE("fused_activation other than Relu is refused by the kernels", "[fusion]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({1, 2}, {1, -1});
  *ws.CreateBlob("w")->GetMutable<Tensor>() = FloatTensor({1, 2}, {1, 1});
  *ws.CreateBlob("b")->GetMutable<Tensor>() = FloatTensor({1}, {0});
  caffe2::OperatorDef op;
  op.set_type("FC");
  op.set_engine("EIGEN");
  for (const char* n : {"x", "w", "b"}) op.add_input(n);
  op.add_output("y");
  auto* a = op.add_arg();
  a->set_name("fused_activation");
  a->set_s("Tanh");
  CHECK_THROWS_AS(ws.RunOperatorOnce(op), Error);
}

TEST_CASE("a workspace net without hetnet_optimize is left as written; a Predictor asks for the rewrite",
          "[fusion]") {
  Model m = ConvBnModel(true);
  caffe2::NetDef plain = m.net;
  plain.clear_arg();
  Workspace ws;
  Prepare(m, &ws);
  CHECK(ws.CreateNet(plain)->def().op_size() == 2);  // Conv, SpatialBN: intermediate blobs stay fetchable
  ws.RunNet(plain.name());
  CHECK(ws.GetBlob("c1") != nullptr);
  RequestInferenceRewrite(&plain);
  CHECK(ws.CreateNet(plain, true)->def().op_size() == 2);  // FoldBatchNormWeights, Conv
  CHECK(ws.GetNet(plain.name())->def().op(0).type() == "FoldBatchNormWeights");
  caffe2::NetDef init = m.init;
  caffe2::NetDef bare = m.net;
  bare.clear_arg();
  bare.clear_external_input();
  for (const auto& op : bare.op())
    for (const auto& in : op.input())
      if (in != "c1") bare.add_external_input(in);
  Predictor p(init, bare);
  CHECK(p.predict_net().op_size() == 2);  // the def as given, with the argument added
  bool asked = false;
  for (const auto& a : p.predict_net().arg()) asked |= a.name() == "hetnet_optimize" && a.i() == 1;
  CHECK(asked);
}

TEST_CASE("BN folds when the net is created, once for every instance of the net over the same weights",
          "[fusion][predictor][prepared]") {
  // A Predictor's instances: child workspaces of the one that holds the weights, one net each.
  Model m = ConvBnModel(true);
  m.net.add_external_input("x");  // fed later, as a Predictor's input
  Workspace weights;
  weights.RunNetOnce(m.init);
  Workspace a(&weights), b(&weights);
  const int64_t folds = SharedFolds().Preparations();
  a.CreateNet(m.net);
  b.CreateNet(m.net);
  CHECK(SharedFolds().Preparations() == folds + 1);
  for (Workspace* ws : {&a, &b}) REQUIRE(ws->GetBlobOrThrow("c1_w_bn_folded").GetTensor().initialized());  // before any run
  CHECK(a.GetBlobOrThrow("c1_w_bn_folded").GetTensor().raw_data() ==
        b.GetBlobOrThrow("c1_w_bn_folded").GetTensor().raw_data());  // one copy
  Workspace ref;
  Prepare(m, &ref);
  caffe2::NetDef plain = m.net;
  SetOptimize(&plain, 0);
  ref.RunNetOnce(plain);
  const auto want = Values(ref.GetBlobOrThrow("bn1").GetTensor());
  for (Workspace* ws : {&a, &b}) {
    *ws->CreateBlob(m.input)->GetMutable<Tensor>() = FloatTensor(m.input_shape, Random(Numel(m.input_shape), 99));
    ws->RunNet(m.net.name());
    const auto got = Values(ws->GetBlobOrThrow("bn1").GetTensor());
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= 1e-5f * std::max(1.f, std::fabs(want[i])));
  }
  CHECK(SharedFolds().Preparations() == folds + 1);  // the runs kept the fold

  // The weights written in place (as FeedBlob into a running Predictor's weights would not, but an
  // optimizer could): each instance folds again, and they share the one new fold.
  float* w = weights.GetMutableBlob("c1_w")->GetMutable<Tensor>()->mutable_data<float>();
  w[0] += 1.0f;
  const void* old_fold = b.GetBlobOrThrow("c1_w_bn_folded").GetTensor().raw_data();
  for (Workspace* ws : {&a, &b}) ws->RunNet(m.net.name());
  CHECK(SharedFolds().Preparations() == folds + 2);
  CHECK(a.GetBlobOrThrow("c1_w_bn_folded").GetTensor().raw_data() ==
        b.GetBlobOrThrow("c1_w_bn_folded").GetTensor().raw_data());
  CHECK(a.GetBlobOrThrow("c1_w_bn_folded").GetTensor().raw_data() != old_fold);
  CHECK(Values(a.GetBlobOrThrow("bn1").GetTensor()) != want);
}

TEST_CASE("folded 3x3 filters are transformed for Winograd once, when the net is created", "[fusion][predictor][prepared]") {
  Model m;
  m.net.set_name("conv_bn_winograd");
  m.input_shape = {1, 32, 12, 12};
  AddConv(&m.net, &m.init, "x", "c1", 32, 32, true, 1);
  AddBN(&m.net, &m.init, "c1", "bn1", 32, 10);
  AddConv(&m.net, &m.init, "bn1", "c2", 32, 32, true, 20);  // two layers: worth blocking
  AddBN(&m.net, &m.init, "c2", "bn2", 32, 30);
  m.net.add_external_output("bn2");
  m.net.add_external_input("x");
  Workspace weights;
  weights.RunNetOnce(m.init);
  Workspace a(&weights), b(&weights);
  const int64_t before = WinogradF43Conv::FilterPreparations();
  NetBase* net = a.CreateNet(m.net);
  // Winograd is expected where the rewrite made the Conv blocked (oneDNN built in: nChw8c) and this
  // CPU runs hetnet's kernel there (AVX2, no AVX-512).
  bool blocked = false;
  for (const auto& op : net->def().op()) blocked |= op.type() == "Conv" && Arg(op, "activation_order") == "NCHW8c";
  ConvPoolGeom g;
  g.N = 1, g.C = g.M = 32, g.H = g.W = g.OH = g.OW = 12, g.kh = g.kw = 3, g.pt = g.pb = g.pl = g.pr = 1;
  g.channel_block = 8;
  const bool winograd = blocked && WinogradF43Conv::Fits(g) && WinogradF43Conv::Pays(g);
  if (!winograd) WARN("the Conv does not run hetnet's Winograd here (no oneDNN, AVX-512 or no AVX2): outputs checked only");
  CHECK(WinogradF43Conv::FilterPreparations() == before + (winograd ? 2 : 0));
  b.CreateNet(m.net);
  const int64_t after_creation = WinogradF43Conv::FilterPreparations();
  CHECK(after_creation == before + (winograd ? 2 : 0));
  Workspace ref;
  Prepare(m, &ref);
  caffe2::NetDef plain = m.net;
  SetOptimize(&plain, 0);
  ref.RunNetOnce(plain);
  const auto want = Values(ref.GetBlobOrThrow("bn2").GetTensor());
  for (Workspace* ws : {&a, &b}) {
    *ws->CreateBlob(m.input)->GetMutable<Tensor>() = FloatTensor(m.input_shape, Random(Numel(m.input_shape), 99));
    ws->RunNet(m.net.name());
    const auto got = Values(ws->GetBlobOrThrow("bn2").GetTensor());
    REQUIRE(got.size() == want.size());
    float scale = 1.f;
    for (float v : want) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= 2e-5f * scale);
  }
  CHECK(WinogradF43Conv::FilterPreparations() == after_creation);  // the runs used it
}
