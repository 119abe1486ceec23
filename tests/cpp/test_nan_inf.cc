// NaN and Inf semantics per operator family (issue 18, item 5): each TEST_CASE is one row of
// docs/nan_inf.md and runs the CPU op in a Workspace on small tensors holding NaN, +Inf and -Inf.
// Expected values are exact (NaN matches only NaN, infinities only themselves) unless a tolerance
// is given for ordinary finite results.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const float kMax = std::numeric_limits<float>::max();
const float kLowest = std::numeric_limits<float>::lowest();

caffe2::Argument ArgF(const std::string& n, float v) { caffe2::Argument a; a.set_name(n); a.set_f(v); return a; }
caffe2::Argument ArgI(const std::string& n, int64_t v) { caffe2::Argument a; a.set_name(n); a.set_i(v); return a; }
caffe2::Argument ArgS(const std::string& n, const std::string& v) { caffe2::Argument a; a.set_name(n); a.set_s(v); return a; }
caffe2::Argument ArgInts(const std::string& n, std::vector<int64_t> v) {
  caffe2::Argument a;
  a.set_name(n);
  for (auto x : v) a.add_ints(x);
  return a;
}

// Runs one CPU operator as a one-op net over ws.
void Run(Workspace& ws, const std::string& type, const std::vector<std::string>& in,
         const std::vector<std::string>& out, const std::vector<caffe2::Argument>& args = {}) {
  caffe2::NetDef net;
  net.set_name("nan_inf_" + type);
  for (const auto& i : in) net.add_external_input(i);
  auto* op = AddOp(&net, type, in, out);
  for (const auto& a : args) *op->add_arg() = a;
  ws.RunNetOnce(net);
}
void Feed(Workspace& ws, const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
  *ws.CreateBlob(name)->GetMutable<Tensor>() = FloatTensor(std::move(shape), v);
}
void FeedInt32(Workspace& ws, const std::string& name, std::vector<int64_t> shape, const std::vector<int32_t>& v) {
  Tensor t(std::move(shape), DataType::Int32);
  std::copy(v.begin(), v.end(), t.mutable_data<int32_t>());
  *ws.CreateBlob(name)->GetMutable<Tensor>() = t;
}
const Tensor& Out(const Workspace& ws, const std::string& name) { return ws.GetBlobOrThrow(name).GetTensor(); }

// NaN only matches NaN; +-Inf only themselves; finite values within tol (relative, 0 = exact).
void Expect(const std::vector<float>& got, const std::vector<float>& want, double tol = 0) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(want[i]) || tol == 0) {
      CHECK(got[i] == want[i]);
    } else {
      CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(double(want[i]))));
    }
  }
}
void Expect(const Workspace& ws, const std::string& blob, const std::vector<float>& want, double tol = 0) {
  Expect(Values(Out(ws, blob)), want, tol);
}
template <typename T>
std::vector<T> As(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

const std::vector<float> kSpecials = {kNaN, kInf, -kInf, -2.f, 0.f, 3.f};

}  // namespace

TEST_CASE("nan_inf: Relu maps NaN to 0", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {6}, kSpecials);
  Run(ws, "Relu", {"x"}, {"y"});
  Expect(ws, "y", {0.f, kInf, 0.f, 0.f, 0.f, 3.f});
}

TEST_CASE("nan_inf: LeakyRelu and PRelu propagate NaN", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {6}, kSpecials);
  Run(ws, "LeakyRelu", {"x"}, {"y"}, {ArgF("alpha", 0.5f)});
  Expect(ws, "y", {kNaN, kInf, -kInf, -1.f, 0.f, 3.f});
  Run(ws, "LeakyRelu", {"x"}, {"y0"}, {ArgF("alpha", 0.f)});  // 0 * -Inf
  Expect(ws, "y0", {kNaN, kInf, kNaN, -0.f, 0.f, 3.f});
  Feed(ws, "x2", {1, 6}, kSpecials);
  Feed(ws, "slope", {1}, {0.5f});
  Run(ws, "PRelu", {"x2", "slope"}, {"p"});
  Expect(ws, "p", {kNaN, kInf, -kInf, -1.f, 0.f, 3.f});
}

TEST_CASE("nan_inf: Sigmoid and Tanh propagate NaN and saturate at +-Inf", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {6}, kSpecials);
  Run(ws, "Sigmoid", {"x"}, {"s"});
  Expect(ws, "s", {kNaN, 1.f, 0.f, 1.f / (1.f + std::exp(2.f)), 0.5f, 1.f / (1.f + std::exp(-3.f))}, 1e-6);
  Run(ws, "Tanh", {"x"}, {"t"});
  Expect(ws, "t", {kNaN, 1.f, -1.f, std::tanh(-2.f), 0.f, std::tanh(3.f)}, 1e-6);
}

TEST_CASE("nan_inf: Softmax turns a row holding NaN or +Inf into NaN", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {5, 3},
       {kNaN, 0, 1, /**/ kInf, 0, 1, /**/ -kInf, 0, 0, /**/ -kInf, -kInf, -kInf, /**/ 0, 0, 0});
  Run(ws, "Softmax", {"x"}, {"y"});
  const float t = 1.f / 3;
  Expect(ws, "y", {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 0.f, 0.5f, 0.5f, kNaN, kNaN, kNaN, t, t, t}, 1e-6);
}

TEST_CASE("nan_inf: SoftmaxWithLoss gives a NaN loss for NaN or +Inf, a clamped loss for -Inf", "[nan_inf]") {
  const double clamp = -std::log(double(1e-20f)), ln2 = std::log(2.0);
  Workspace ws;
  FeedInt32(ws, "label", {2}, {1, 0});
  Feed(ws, "x", {2, 2}, {0, -kInf, 0, 0});  // p[label] = 0 in row 0
  Run(ws, "SoftmaxWithLoss", {"x", "label"}, {"p", "loss"});
  Expect(ws, "p", {1, 0, 0.5f, 0.5f}, 1e-6);
  Expect(ws, "loss", {static_cast<float>((clamp + ln2) / 2)}, 1e-5);
  for (float bad : {kNaN, kInf}) {
    INFO("row 0 holds " << bad);
    Feed(ws, "x", {2, 2}, {bad, 0, 0, 0});
    Run(ws, "SoftmaxWithLoss", {"x", "label"}, {"p", "loss"});
    Expect(ws, "p", {kNaN, kNaN, 0.5f, 0.5f}, 1e-6);
    Expect(ws, "loss", {kNaN});
  }
}

TEST_CASE("nan_inf: FC propagates NaN and Inf along the rows they reach; Inf * 0 is NaN", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {3, 3}, {kNaN, 1, 2, /**/ kInf, 1, 2, /**/ 1, 2, 3});
  Feed(ws, "w", {3, 3}, {1, 0, 0, /**/ 0, 1, 1, /**/ -1, 0, 0});
  Feed(ws, "b", {3}, {0, 0, 0});
  Run(ws, "FC", {"x", "w", "b"}, {"y"});
  Expect(ws, "y", {kNaN, kNaN, kNaN, /**/ kInf, kNaN, -kInf, /**/ 1, 5, -1});
}

TEST_CASE("nan_inf: Conv propagates NaN and Inf to the outputs whose window holds them", "[nan_inf]") {
  Workspace ws;
  // Image 0: NaN at (0, 0), under the filter's zero weight. Image 1: +Inf at (1, 1), -Inf at (2, 2).
  Feed(ws, "x", {2, 1, 3, 3}, {kNaN, 1, 1, 1, 1, 1, 1, 1, 1, /**/ 1, 1, 1, 1, kInf, 1, 1, 1, -kInf});
  Feed(ws, "f", {1, 1, 2, 2}, {0, 1, 1, 1});
  Feed(ws, "b", {1}, {0});
  Run(ws, "Conv", {"x", "f", "b"}, {"y"}, {ArgI("kernel", 2)});
  Expect(ws, "y", {kNaN, 3, 3, 3, /**/ kInf, kInf, kInf, kNaN});
  Run(ws, "Conv", {"x", "f", "b"}, {"yp"}, {ArgI("kernel", 2), ArgI("pad", 1)});  // zero padding adds no NaN
  const std::vector<float> yp = Values(Out(ws, "yp"));
  REQUIRE(yp.size() == 32);
  for (int i = 0; i < 16; ++i) {  // image 0: only the 4 windows over (0, 0) hold the NaN
    INFO("output " << i);
    CHECK(std::isnan(yp[i]) == (i == 0 || i == 1 || i == 4 || i == 5));
  }
}

TEST_CASE("nan_inf: MaxPool drops NaN; all -Inf or all NaN windows give the lowest float", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {1, 1, 2, 12},
       {kNaN, 1, kInf, 1, -kInf, -1, kInf, -kInf, kNaN, kNaN, -kInf, -kInf,
        2, 3, 1, 1, -1, -1, 0, 0, kNaN, kNaN, -kInf, -kInf});
  Run(ws, "MaxPool", {"x"}, {"y"}, {ArgI("kernel", 2), ArgI("stride", 2)});
  Expect(ws, "y", {3, kInf, -1, kInf, kLowest, kLowest});
  // The same values as one channel of order NHWC (the channels-last kernel).
  Feed(ws, "xl", {1, 2, 12, 1}, Values(Out(ws, "x")));
  Run(ws, "MaxPool", {"xl"}, {"yl"}, {ArgI("kernel", 2), ArgI("stride", 2), ArgS("order", "NHWC")});
  Expect(ws, "yl", {3, kInf, -1, kInf, kLowest, kLowest});
}

TEST_CASE("nan_inf: AveragePool propagates NaN and Inf", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {1, 1, 2, 12},
       {kNaN, 1, kInf, 1, -kInf, -1, kInf, -kInf, kNaN, kNaN, -kInf, -kInf,
        2, 3, 1, 1, -1, -1, 0, 0, kNaN, kNaN, -kInf, -kInf});
  Run(ws, "AveragePool", {"x"}, {"y"}, {ArgI("kernel", 2), ArgI("stride", 2)});
  Expect(ws, "y", {kNaN, kInf, -kInf, kNaN, kNaN, -kInf});
  // The same values as one channel of order NHWC (the channels-last kernel).
  Feed(ws, "xl", {1, 2, 12, 1}, Values(Out(ws, "x")));
  Run(ws, "AveragePool", {"xl"}, {"yl"}, {ArgI("kernel", 2), ArgI("stride", 2), ArgS("order", "NHWC")});
  Expect(ws, "yl", {kNaN, kInf, -kInf, kNaN, kNaN, -kInf});
}

TEST_CASE("nan_inf: Add, Sub, Mul, Div follow IEEE arithmetic", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "a", {8}, {kNaN, kInf, kInf, -kInf, 1, 0, kInf, -1});
  Feed(ws, "b", {8}, {1, -kInf, kInf, 2, 0, 0, 0, 0});
  Run(ws, "Add", {"a", "b"}, {"add"});
  Expect(ws, "add", {kNaN, kNaN, kInf, -kInf, 1, 0, kInf, -1});
  Run(ws, "Sub", {"a", "b"}, {"sub"});
  Expect(ws, "sub", {kNaN, kInf, kNaN, -kInf, 1, 0, kInf, -1});
  Run(ws, "Mul", {"a", "b"}, {"mul"});
  Expect(ws, "mul", {kNaN, -kInf, kInf, -kInf, 0, 0, kNaN, 0});
  Run(ws, "Div", {"a", "b"}, {"div"});
  Expect(ws, "div", {kNaN, kNaN, kNaN, -kInf, kInf, kNaN, kInf, -kInf});
  Feed(ws, "nan", {1}, {kNaN});  // a broadcast NaN reaches every element
  Run(ws, "Add", {"a", "nan"}, {"bc"}, {ArgI("broadcast", 1)});
  for (float v : Values(Out(ws, "bc"))) CHECK(std::isnan(v));
}

TEST_CASE("nan_inf: integer Div by zero gives 0 and lowest / -1 wraps, never SIGFPE", "[nan_inf]") {
  // device/divide.h: x86 raises SIGFPE for both, which killed the process.
  Workspace ws;
  const int32_t lo = std::numeric_limits<int32_t>::lowest();
  FeedInt32(ws, "a", {5}, {7, -7, 0, lo, -9});
  FeedInt32(ws, "b", {5}, {0, 0, 0, -1, 2});
  Run(ws, "Div", {"a", "b"}, {"q"});
  CHECK(As<int32_t>(Out(ws, "q")) == std::vector<int32_t>{0, 0, 0, lo, -4});
  Tensor a64({2}, DataType::Int64), b64({2}, DataType::Int64);
  a64.mutable_data<int64_t>()[0] = std::numeric_limits<int64_t>::lowest();
  a64.mutable_data<int64_t>()[1] = 5;
  b64.mutable_data<int64_t>()[0] = -1;
  b64.mutable_data<int64_t>()[1] = 0;
  *ws.CreateBlob("a64")->GetMutable<Tensor>() = a64;
  *ws.CreateBlob("b64")->GetMutable<Tensor>() = b64;
  Run(ws, "Div", {"a64", "b64"}, {"q64"});
  CHECK(As<int64_t>(Out(ws, "q64")) == std::vector<int64_t>{std::numeric_limits<int64_t>::lowest(), 0});
}

TEST_CASE("nan_inf: random fills refuse non-finite arguments", "[nan_inf]") {
  Workspace ws;
  auto refused = [&](const std::string& type, std::vector<caffe2::Argument> args, const std::string& text) {
    args.push_back(ArgInts("shape", {4}));
    caffe2::NetDef net;
    net.set_name("fill");
    auto* op = AddOp(&net, type, {}, {"r"});
    for (const auto& a : args) *op->add_arg() = a;
    CHECK_THROWS_WITH(ws.RunNetOnce(net), Catch::Contains(text) && Catch::Contains("'r'"));
  };
  refused("UniformFill", {ArgF("min", -kInf), ArgF("max", kInf)}, "must be finite");
  refused("UniformFill", {ArgF("min", kNaN)}, "must be finite");
  refused("UniformFill", {ArgF("min", -3e38f), ArgF("max", 3e38f)}, "less than 3.4e38 apart");
  refused("GaussianFill", {ArgF("std", kInf)}, "positive and finite");
  refused("GaussianFill", {ArgF("mean", kNaN)}, "mean must be a finite number");
}

TEST_CASE("nan_inf: Sum, Scale and WeightedSum follow IEEE arithmetic", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x0", {4}, {kNaN, kInf, kInf, 3e38f});
  Feed(ws, "x1", {4}, {1, -kInf, 1, 3e38f});
  Run(ws, "Sum", {"x0", "x1"}, {"sum"});
  Expect(ws, "sum", {kNaN, kNaN, kInf, kInf});  // 6e38 overflows to +Inf
  Feed(ws, "s", {3}, {kInf, kNaN, 1});
  Run(ws, "Scale", {"s"}, {"scaled"}, {ArgF("scale", 0.f)});
  Expect(ws, "scaled", {kNaN, kNaN, 0});
  Feed(ws, "a", {2}, {kInf, 1});
  Feed(ws, "b", {2}, {1, 2});
  Feed(ws, "w0", {1}, {0});
  Feed(ws, "w1", {1}, {1});
  Run(ws, "WeightedSum", {"a", "w0", "b", "w1"}, {"ws"});  // weight 0 does not mask Inf
  Expect(ws, "ws", {kNaN, 2});
}

TEST_CASE("nan_inf: SpatialBN (is_test) is per element; a negative variance gives a NaN channel", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {1, 3, 1, 2}, {kNaN, 1, kInf, -kInf, 1, 2});
  Feed(ws, "scale", {3}, {1, 1, 1});
  Feed(ws, "bias", {3}, {0, 0, 0});
  Feed(ws, "mean", {3}, {0, 0, 0});
  Feed(ws, "var", {3}, {1, 1, -2});
  Run(ws, "SpatialBN", {"x", "scale", "bias", "mean", "var"}, {"y"}, {ArgI("is_test", 1)});
  Expect(ws, "y", {kNaN, 1.f / std::sqrt(1.f + 1e-5f), kInf, -kInf, kNaN, kNaN}, 1e-6);
}

TEST_CASE("nan_inf: SpatialBN training turns a channel holding NaN or Inf into NaN", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {2, 3, 1, 1}, {kNaN, kInf, 1, /**/ 1, 1, 3});  // channel 2 is finite: mean 2, var 1
  Feed(ws, "scale", {3}, {1, 1, 1});
  Feed(ws, "bias", {3}, {0, 0, 0});
  Feed(ws, "rm", {3}, {0, 0, 0});
  Feed(ws, "rv", {3}, {1, 1, 1});
  Run(ws, "SpatialBN", {"x", "scale", "bias", "rm", "rv"}, {"y", "rm", "rv", "sm", "siv"});
  const float a = 1.f / std::sqrt(1.f + 1e-5f);
  Expect(ws, "y", {kNaN, kNaN, -a, kNaN, kNaN, a}, 1e-6);
  Expect(ws, "sm", {kNaN, kInf, 2});
  Expect(ws, "rm", {kNaN, kInf, 0.2f}, 1e-6);  // 0.9 * 0 + 0.1 * mean
  Expect(ws, "rv", {kNaN, kNaN, 1}, 1e-6);
}

namespace {
// LRN by its definition (size 3, alpha 1, beta 0.75, bias 1) for a finite channel c of x [1, C, 1, 1].
float LrnRef(const std::vector<float>& x, int c) {
  double s = 0;
  for (int k = std::max(c - 1, 0); k < std::min<int>(c + 2, x.size()); ++k) s += double(x[k]) * x[k];
  return static_cast<float>(x[c] * std::pow(1 + s / 3, -0.75));
}
const std::vector<caffe2::Argument> kLrnArgs = {ArgI("size", 3), ArgF("alpha", 1.f), ArgF("beta", 0.75f),
                                                ArgF("bias", 1.f)};
}  // namespace

TEST_CASE("nan_inf: LRN propagates NaN and Inf to the channels whose window holds them", "[nan_inf]") {
  Workspace ws;
  const std::vector<float> x = {1, 2, 3, 4, 5};
  Feed(ws, "x", {1, 5, 1, 1}, {1, 2, 3, 4, kNaN});
  Run(ws, "LRN", {"x"}, {"y"}, kLrnArgs);
  Expect(ws, "y", {LrnRef(x, 0), LrnRef(x, 1), LrnRef(x, 2), kNaN, kNaN}, 1e-5);
  Feed(ws, "x", {1, 5, 1, 1}, {1, 2, 3, 4, kInf});  // scale = Inf: Inf * Inf^-beta = NaN, 4 * Inf^-beta = 0
  Run(ws, "LRN", {"x"}, {"y"}, kLrnArgs);
  Expect(ws, "y", {LrnRef(x, 0), LrnRef(x, 1), LrnRef(x, 2), 0, kNaN}, 1e-5);
}

// The window sums slide over the channels (operators/lrn_op.h, LRNWindowSum): a NaN or Inf that
// leaves a window must leave no trace, in the forward and the gradient.
TEST_CASE("nan_inf: LRN leaves the channels outside a NaN's or Inf's window finite", "[nan_inf]") {
  Workspace ws;
  const std::vector<float> x = {0, 1, 2, 3, 4};
  Feed(ws, "x", {1, 5, 1, 1}, x);
  Run(ws, "LRN", {"x"}, {"y"}, kLrnArgs);
  Feed(ws, "dy", {1, 5, 1, 1}, {1, 1, 1, 1, 1});
  Run(ws, "LRNGradient", {"x", "y", "dy"}, {"dx"}, kLrnArgs);
  const std::vector<float> dx_finite = Values(Out(ws, "dx"));
  for (float bad : {kNaN, kInf}) {
    INFO("channel 0 holds " << bad);
    Feed(ws, "x", {1, 5, 1, 1}, {bad, 1, 2, 3, 4});
    Run(ws, "LRN", {"x"}, {"y"}, kLrnArgs);
    const std::vector<float> y = Values(Out(ws, "y"));
    CHECK(std::isnan(y[0]));
    for (int c = 2; c < 5; ++c) CHECK(y[c] == Approx(LrnRef(x, c)).epsilon(1e-5));
    // dX[c] reads scale and dY Y / scale of channels c - 1 .. c + 1, whose windows reach c - 2 .. c + 2.
    Run(ws, "LRNGradient", {"x", "y", "dy"}, {"dx"}, kLrnArgs);
    const std::vector<float> dx = Values(Out(ws, "dx"));
    CHECK(std::isnan(dx[0]));
    for (int c = 3; c < 5; ++c) CHECK(dx[c] == Approx(dx_finite[c]).epsilon(1e-5));
  }
}

TEST_CASE("nan_inf: Cast float to integer gives 0 for NaN and Inf; to bool gives true", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {7}, {kNaN, kInf, -kInf, 2.7f, -2.7f, 1e20f, 0});
  Run(ws, "Cast", {"x"}, {"i32"}, {ArgS("to", "INT32")});
  CHECK(As<int32_t>(Out(ws, "i32")) == std::vector<int32_t>{0, 0, 0, 2, -2, 0, 0});
  Run(ws, "Cast", {"x"}, {"i64"}, {ArgS("to", "INT64")});
  CHECK(As<int64_t>(Out(ws, "i64")) == std::vector<int64_t>{0, 0, 0, 2, -2, 0, 0});
  Run(ws, "Cast", {"x"}, {"b"}, {ArgS("to", "BOOL")});
  CHECK(As<bool>(Out(ws, "b")) == std::vector<bool>{true, true, true, true, true, true, false});
}

TEST_CASE("nan_inf: Cast to float64 and float16 keeps NaN and Inf; FloatToHalf clip=1 saturates Inf", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {5}, {kNaN, kInf, -kInf, 1e20f, -1e20f});
  Run(ws, "Cast", {"x"}, {"d"}, {ArgS("to", "DOUBLE")});
  const auto d = As<double>(Out(ws, "d"));
  REQUIRE(d.size() == 5);
  CHECK(std::isnan(d[0]));
  CHECK((d[1] == double(kInf) && d[2] == -double(kInf) && d[3] == double(1e20f)));
  auto halves = [&](const std::string& blob) {
    std::vector<float> v;
    for (Half h : As<Half>(Out(ws, blob))) v.push_back(HalfToFloat(h));
    return v;
  };
  Run(ws, "Cast", {"x"}, {"h"}, {ArgS("to", "FLOAT16")});
  Expect(halves("h"), {kNaN, kInf, -kInf, kInf, -kInf});  // beyond 65504: Inf, as IEEE rounding
  Run(ws, "FloatToHalf", {"x"}, {"hc"}, {ArgI("clip", 1)});
  Expect(halves("hc"), {kNaN, 65504, -65504, 65504, -65504});
  Run(ws, "HalfToFloat", {"h"}, {"f"});
  Expect(ws, "f", {kNaN, kInf, -kInf, kInf, -kInf});
}

TEST_CASE("nan_inf: Clip keeps NaN and clips +-Inf to the bounds", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {4}, {kNaN, kInf, -kInf, 0.5f});
  Run(ws, "Clip", {"x"}, {"y"}, {ArgF("min", -1.f), ArgF("max", 1.f)});
  Expect(ws, "y", {kNaN, 1, -1, 0.5f});
  Run(ws, "Clip", {"x"}, {"d"});  // default bounds: the lowest and highest float
  Expect(ws, "d", {kNaN, kMax, kLowest, 0.5f});
}

TEST_CASE("nan_inf: ReduceSum and ReduceMean follow IEEE arithmetic, accumulating in float64", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {5, 2}, {kNaN, 1, /**/ kInf, 1, /**/ kInf, -kInf, /**/ kMax, kMax, /**/ -kInf, -1});
  Run(ws, "ReduceSum", {"x"}, {"s"}, {ArgInts("axes", {1}), ArgI("keepdims", 0)});
  Expect(ws, "s", {kNaN, kInf, kNaN, kInf, -kInf});
  Run(ws, "ReduceMean", {"x"}, {"m"}, {ArgInts("axes", {1}), ArgI("keepdims", 0)});
  Expect(ws, "m", {kNaN, kInf, kNaN, kMax, -kInf});  // no overflow in the float64 sum
  Feed(ws, "e", {0, 2}, {});
  Run(ws, "ReduceMean", {"e"}, {"em"}, {ArgInts("axes", {0})});
  Expect(ws, "em", {kNaN, kNaN});  // 0 / 0
}

TEST_CASE("nan_inf: Sqrt and SumSqrElements follow IEEE; Sign maps NaN to 0", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {5}, {kNaN, kInf, -kInf, -1, 4});
  Run(ws, "Sqrt", {"x"}, {"r"});
  Expect(ws, "r", {kNaN, kInf, kNaN, kNaN, 2});
  Run(ws, "Sign", {"x"}, {"s"});
  Expect(ws, "s", {0, 1, -1, -1, 1});
  Feed(ws, "a", {2}, {-kInf, 1});
  Feed(ws, "b", {2}, {kNaN, 1});
  Run(ws, "SumSqrElements", {"a"}, {"sa"});
  Run(ws, "SumSqrElements", {"b"}, {"sb"});
  Expect(ws, "sa", {kInf});
  Expect(ws, "sb", {kNaN});
}

TEST_CASE("nan_inf: cross entropy propagates NaN and clamps probabilities below 1e-20, -Inf included", "[nan_inf]") {
  const float clamp = -std::log(1e-20f);
  Workspace ws;
  Feed(ws, "p", {4, 2}, {kNaN, 0.5f, /**/ 0, 1, /**/ -kInf, 1, /**/ kInf, 0});
  FeedInt32(ws, "label", {4}, {0, 0, 0, 0});
  Run(ws, "LabelCrossEntropy", {"p", "label"}, {"y"});
  Expect(ws, "y", {kNaN, clamp, clamp, -kInf}, 1e-6);
  Feed(ws, "q", {2, 2}, {kNaN, 1, /**/ 0.5f, 0.5f});
  Feed(ws, "soft", {2, 2}, {0, 1, /**/ 1, 0});  // label 0 * log(NaN) is still NaN
  Run(ws, "CrossEntropy", {"q", "soft"}, {"z"});
  Expect(ws, "z", {kNaN, std::log(2.f)}, 1e-6);
}

TEST_CASE("nan_inf: Accuracy counts a NaN prediction at the label as a hit", "[nan_inf]") {
  Workspace ws;
  Feed(ws, "x", {5, 3}, {kNaN, .2f, .1f, /**/ .1f, kNaN, .2f, /**/ .5f, .2f, kNaN, /**/ kInf, 1, 0, /**/ kNaN, kNaN, kNaN});
  FeedInt32(ws, "label", {5}, {0, 2, 1, 0, 2});
  Run(ws, "Accuracy", {"x", "label"}, {"acc"});
  Expect(ws, "acc", {0.8f});  // rows 0, 1, 3, 4 hit; row 2 misses (0.5 > 0.2)
}

TEST_CASE("nan_inf: ConstantFill keeps a NaN or Inf value for float dtypes, refuses it for integers", "[nan_inf]") {
  Workspace ws;
  Run(ws, "ConstantFill", {}, {"f"}, {ArgInts("shape", {2}), ArgF("value", kNaN)});
  Expect(ws, "f", {kNaN, kNaN});
  Run(ws, "ConstantFill", {}, {"d"}, {ArgInts("shape", {2}), ArgF("value", kInf), ArgI("dtype", 13)});
  CHECK(As<double>(Out(ws, "d")) == std::vector<double>{double(kInf), double(kInf)});
  Run(ws, "ConstantFill", {}, {"h"}, {ArgInts("shape", {1}), ArgF("value", -kInf), ArgI("dtype", 12)});
  CHECK(HalfToFloat(Out(ws, "h").data<Half>()[0]) == -kInf);
  try {
    Run(ws, "ConstantFill", {}, {"i"}, {ArgInts("shape", {2}), ArgF("value", kNaN), ArgI("dtype", 2)});
    FAIL("ConstantFill of NaN into int32 ran");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("does not fit dtype int32"));
  }
}

TEST_CASE("nan_inf: data movement ops copy NaN payloads and infinities bit for bit", "[nan_inf]") {
  uint32_t bits = 0x7fc01234u;  // a quiet NaN with a payload
  float payload;
  std::memcpy(&payload, &bits, 4);
  Workspace ws;
  Feed(ws, "x", {2, 2}, {payload, kInf, -kInf, -0.f});
  Run(ws, "Transpose", {"x"}, {"t"});
  Run(ws, "Concat", {"x", "t"}, {"c", "c_info"}, {ArgI("axis", 0)});
  const std::vector<float> want = {payload, kInf, -kInf, -0.f, /**/ payload, -kInf, kInf, -0.f};
  const std::vector<float> got = Values(Out(ws, "c"));
  REQUIRE(got.size() == want.size());
  CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
}
