// Autodiff (core/autodiff.h): the whole backward pass of a small MLP (FC, in-place Relu, a blob and a
// weight used twice, Sum, SoftmaxWithLoss) against finite differences of the loss; Caffe2's gradient
// names (loss seed, autosplit + Sum); StopGradient; device options; errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/autodiff.h"
#include "core/gradient.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

caffe2::NetDef MlpNet() {
  caffe2::NetDef net;
  net.set_name("mlp");
  *net.add_op() = MakeOp("FC", {"x", "w1", "b1"}, {"h"});
  *net.add_op() = MakeOp("Relu", {"h"}, {"h"});  // in place
  *net.add_op() = MakeOp("FC", {"h", "w2", "b2"}, {"a"});  // h (after Relu) used twice, w2 shared
  *net.add_op() = MakeOp("FC", {"h", "w2", "b3"}, {"b"});
  *net.add_op() = MakeOp("Sum", {"a", "b"}, {"s"});
  *net.add_op() = MakeOp("SoftmaxWithLoss", {"s", "label"}, {"softmax", "loss"});
  for (auto n : {"x", "w1", "b1", "w2", "b2", "b3", "label"}) net.add_external_input(n);
  return net;
}

struct Param {
  std::string name;
  std::vector<int64_t> shape;
};
const std::vector<Param> kParams = {{"x", {4, 5}}, {"w1", {6, 5}}, {"b1", {6}}, {"w2", {3, 6}}, {"b2", {3}}, {"b3", {3}}};

void FeedAll(Workspace& ws, const std::map<std::string, std::vector<float>>& values) {
  for (const auto& p : kParams) Feed<float>(ws, p.name, p.shape, values.at(p.name));
  Feed<int32_t>(ws, "label", {4}, {0, 2, 1, 2});
}

float Loss(const caffe2::NetDef& fwd, const std::map<std::string, std::vector<float>>& values) {
  Workspace ws;
  FeedAll(ws, values);
  ws.RunNetOnce(fwd);
  return FetchVec<float>(ws, "loss")[0];
}

std::vector<std::string> Types(const std::vector<caffe2::OperatorDef>& ops) {
  std::vector<std::string> t;
  for (const auto& op : ops) t.push_back(op.type());
  return t;
}

}  // namespace

TEST_CASE("autodiff: MLP backward pass matches finite differences of the loss", "[autodiff]") {
  const caffe2::NetDef fwd = MlpNet();
  caffe2::NetDef train = fwd;
  auto grads = AddGradientOperators(&train, {"loss"});
  std::map<std::string, std::vector<float>> values;
  unsigned seed = 1;
  for (const auto& p : kParams) values[p.name] = RandomVec(Numel(p.shape), seed++, -1.f, 1.f);

  Workspace ws;
  FeedAll(ws, values);
  ws.RunNetOnce(train);
  for (const auto& p : kParams) {
    INFO("blob " << p.name);
    REQUIRE(grads.count(p.name));
    CHECK(grads[p.name] == p.name + "_grad");
    const std::vector<float> analytic = FetchVec<float>(ws, grads[p.name]);
    REQUIRE(analytic.size() == values[p.name].size());
    for (size_t i = 0; i < analytic.size(); ++i) {
      auto plus = values, minus = values;
      const float eps = 1e-2f;
      plus[p.name][i] += eps;
      minus[p.name][i] -= eps;
      const double numeric = (static_cast<double>(Loss(fwd, plus)) - Loss(fwd, minus)) / (2 * eps);
      INFO("element " << i << " analytic " << analytic[i] << " numeric " << numeric);
      CHECK(std::abs(analytic[i] - numeric) <= 2e-3 + 2e-2 * std::abs(numeric));
    }
  }
  CHECK(FetchVec<float>(ws, "loss_grad") == std::vector<float>{1.f});
}

TEST_CASE("autodiff: Caffe2 names: loss seed, autosplit partial gradients, Sum", "[autodiff]") {
  caffe2::NetDef net = MlpNet();
  BackwardPass pass = GetBackwardPass(net, std::vector<std::string>{"loss"});
  const auto& ops = pass.ops;
  REQUIRE(Types(ops) == std::vector<std::string>{"ConstantFill", "SoftmaxWithLossGradient", "Scale", "Scale",
                                                 "FCGradient", "FCGradient", "Sum", "ReluGradient", "FCGradient",
                                                 "Sum"});
  // seed: ConstantFill(loss) -> loss_grad, value 1.0
  CHECK(ops[0].input(0) == "loss");
  CHECK(ops[0].output(0) == "loss_grad");
  CHECK(ops[0].arg(0).name() == "value");
  CHECK(ops[0].arg(0).f() == 1.0f);
  CHECK_FALSE(ops[0].is_gradient_op());
  CHECK(ops[1].is_gradient_op());
  // the later consumer (FC -> b) keeps h_grad / w2_grad; the earlier one gets the autosplit names
  CHECK(ops[4].output(0) == "w2_grad");
  CHECK(ops[4].output(2) == "h_grad");
  CHECK(ops[5].output(0) == "_w2_grad_autosplit_0");
  CHECK(ops[5].output(2) == "_h_grad_autosplit_0");
  CHECK(std::vector<std::string>(ops[6].input().begin(), ops[6].input().end()) ==
        std::vector<std::string>{"h_grad", "_h_grad_autosplit_0"});
  CHECK(ops[6].output(0) == "h_grad");
  // in-place Relu: ReluGradient(h, h_grad) -> h_grad
  CHECK(std::vector<std::string>(ops[7].input().begin(), ops[7].input().end()) ==
        std::vector<std::string>{"h", "h_grad"});
  CHECK(ops[7].output(0) == "h_grad");
  // w2 is an external input: its Sum comes last
  CHECK(std::vector<std::string>(ops[9].input().begin(), ops[9].input().end()) ==
        std::vector<std::string>{"w2_grad", "_w2_grad_autosplit_0"});
  CHECK(ops[9].output(0) == "w2_grad");
  CHECK(pass.blob_to_grad.at("loss") == "loss_grad");
  CHECK(pass.blob_to_grad.at("h") == "h_grad");
  CHECK(pass.blob_to_grad.count("label") == 0);
  CHECK(pass.blob_to_grad.count("softmax") == 0);
}

TEST_CASE("autodiff: StopGradient cuts the backward pass (also in place)", "[autodiff]") {
  for (bool inplace : {false, true}) {
    caffe2::NetDef net;
    net.set_name("stop");
    *net.add_op() = MakeOp("FC", {"x", "w1", "b1"}, {"h"});
    const std::string h2 = inplace ? "h" : "h2";
    *net.add_op() = MakeOp("StopGradient", {"h"}, {h2});
    *net.add_op() = MakeOp("FC", {h2, "w2", "b2"}, {"s"});
    *net.add_op() = MakeOp("SoftmaxWithLoss", {"s", "label"}, {"softmax", "loss"});
    BackwardPass pass = GetBackwardPass(net, std::vector<std::string>{"loss"});
    CHECK(Types(pass.ops) == std::vector<std::string>{"ConstantFill", "SoftmaxWithLossGradient", "FCGradient"});
    CHECK(pass.blob_to_grad.count("w2") == 1);
    CHECK(pass.blob_to_grad.count("w1") == 0);
    CHECK(pass.blob_to_grad.count("x") == 0);
    CHECK(pass.blob_to_grad.count("h") == (inplace ? 0 : 0));
    CHECK(pass.blob_to_grad.count(h2) == (inplace ? 0 : 1));
  }
  // StopGradient runs as identity
  Workspace ws;
  Feed<float>(ws, "x", {3}, {1.f, -2.f, 3.f});
  RunOp(ws, MakeOp("StopGradient", {"x"}, {"y"}));
  CHECK(FetchVec<float>(ws, "y") == std::vector<float>{1.f, -2.f, 3.f});
  RunOp(ws, MakeOp("StopGradient", {"x"}, {"x"}));
  CHECK(FetchVec<float>(ws, "x") == std::vector<float>{1.f, -2.f, 3.f});
}

TEST_CASE("autodiff: gradient ops carry their forward op's device option", "[autodiff]") {
  caffe2::NetDef net;
  net.set_name("mixed");
  *net.add_op() = MakeOp("FC", {"x", "w", "b"}, {"y"}, {}, Device::CUDA(0));
  *net.add_op() = MakeOp("SoftmaxWithLoss", {"y", "label"}, {"softmax", "loss"});
  BackwardPass pass = GetBackwardPass(net, std::vector<std::string>{"loss"});
  REQUIRE(pass.ops.size() == 3);
  CHECK_FALSE(pass.ops[1].has_device_option());
  REQUIRE(pass.ops[2].type() == "FCGradient");
  CHECK(pass.ops[2].device_option().device_type() == 1);
  CHECK(pass.ops[2].device_option().device_id() == 0);
}

TEST_CASE("autodiff: errors name the net, operator and blob", "[autodiff]") {
  SECTION("no gradient maker on the path") {
    caffe2::NetDef net;
    net.set_name("nomaker");
    *net.add_op() = MakeOp("FC", {"x", "w", "b"}, {"y"});
    *net.add_op() = MakeOp("WeightedSum", {"y", "one"}, {"z"});
    *net.add_op() = MakeOp("SoftmaxWithLoss", {"z", "label"}, {"softmax", "loss"});
    try {
      GetBackwardPass(net, std::vector<std::string>{"loss"});
      FAIL("expected an error");
    } catch (const Error& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find("operator #1 (WeightedSum)") != std::string::npos);
      CHECK(msg.find("'z'") != std::string::npos);
      CHECK(msg.find("nomaker") != std::string::npos);
    }
  }
  SECTION("forward value overwritten in place before the gradient needs it") {
    caffe2::NetDef net;
    net.set_name("overwritten");
    *net.add_op() = MakeOp("FC", {"x", "w1", "b1"}, {"h"});
    *net.add_op() = MakeOp("FC", {"h", "w2", "b2"}, {"a"});  // FCGradient needs h as it is here
    *net.add_op() = MakeOp("Relu", {"h"}, {"h"});           // ... but Relu overwrites it
    *net.add_op() = MakeOp("FC", {"h", "w3", "b3"}, {"c"});
    *net.add_op() = MakeOp("Sum", {"a", "c"}, {"s"});
    *net.add_op() = MakeOp("SoftmaxWithLoss", {"s", "label"}, {"softmax", "loss"});
    try {
      GetBackwardPass(net, std::vector<std::string>{"loss"});
      FAIL("expected an error");
    } catch (const Error& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find("operator #1 (FC)") != std::string::npos);
      CHECK(msg.find("'h'") != std::string::npos);
      CHECK(msg.find("operator #2 (Relu)") != std::string::npos);
    }
  }
  SECTION("unknown loss") {
    caffe2::NetDef net;
    *net.add_op() = MakeOp("FC", {"x", "w", "b"}, {"y"});
    CHECK_THROWS_WITH(GetBackwardPass(net, std::vector<std::string>{"nope"}),
                      Catch::Contains("loss blob 'nope'"));
  }
}
