// Add/Sub/Mul/Div (same shape and Caffe2 legacy broadcast with axis), Sum, Scale.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
double Apply(const std::string& t, double a, double b) {
  if (t == "Add") return a + b;
  if (t == "Sub") return a - b;
  if (t == "Mul") return a * b;
  return a / b;
}
// Reference: B broadcast over A with B's dims at [axis, axis + nb) (1s in B broadcast too).
std::vector<double> RefBroadcast(const std::string& t, const std::vector<float>& a, const std::vector<int64_t>& as,
                                 const std::vector<float>& b, const std::vector<int64_t>& bs, int axis) {
  std::vector<double> c(a.size());
  std::vector<int64_t> idx(as.size());
  for (size_t k = 0; k < a.size(); ++k) {
    int64_t r = k;
    for (int d = static_cast<int>(as.size()) - 1; d >= 0; --d) { idx[d] = r % as[d]; r /= as[d]; }
    int64_t bk = 0;
    for (size_t j = 0; j < bs.size(); ++j) bk = bk * bs[j] + (bs[j] == 1 ? 0 : idx[axis + j]);
    c[k] = Apply(t, a[k], b[bk]);
  }
  return c;
}
void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
}  // namespace

TEST_CASE("Add/Sub/Mul/Div same shape and broadcast", "[ops][elementwise]") {
  struct Case { std::vector<int64_t> as, bs; int axis; bool pass_axis; };
  std::vector<Case> cases{
      {{2, 3, 5}, {2, 3, 5}, 0, false},  // same shape, no broadcast arg needed
      {{2, 3, 5}, {5}, 2, false},        // suffix
      {{2, 3, 5}, {3, 5}, 1, false},
      {{2, 3, 5}, {3}, 1, true},         // middle with axis
      {{2, 3, 5}, {2}, 0, true},         // leading with axis
      {{2, 3, 5}, {3, 1}, 1, true},      // trailing 1 stripped
      {{2, 3, 5}, {1}, 2, false},        // one element
      {{4, 0, 3}, {3}, 2, false},        // zero-size A
  };
  for (const std::string t : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& c : cases) {
      Workspace ws;
      auto a = RandomVec(Numel(c.as), 1, 0.5f, 2.f), b = RandomVec(Numel(c.bs), 2, 0.5f, 2.f);
      Feed<float>(ws, "A", c.as, a);
      Feed<float>(ws, "B", c.bs, b);
      std::vector<caffe2::Argument> args;
      if (c.as != c.bs) args.push_back(ArgI("broadcast", 1));
      if (c.pass_axis) args.push_back(ArgI("axis", c.axis));
      auto def = MakeOp(t, {"A", "B"}, {"C"}, args);
      INFO(t << " A" << ShapeToString(c.as) << " B" << ShapeToString(c.bs));
      RunOp(ws, def);
      CHECK(Fetch(ws, "C").shape() == c.as);
      CheckClose(FetchVec<float>(ws, "C"), RefBroadcast(t, a, c.as, b, c.bs, c.axis));
      CheckShapeInference(ws, def);
      // In place on A.
      RunOp(ws, MakeOp(t, {"A", "B"}, {"A"}, args));
      CheckClose(FetchVec<float>(ws, "A"), RefBroadcast(t, a, c.as, b, c.bs, c.axis));
    }
  }
}

TEST_CASE("Elementwise ops on int32/int64/double and in place on B", "[ops][elementwise]") {
  Workspace ws;
  Feed<int32_t>(ws, "A", {2, 2}, {1, 2, 3, 4});
  Feed<int32_t>(ws, "B", {2}, {10, 20});
  RunOp(ws, MakeOp("Mul", {"A", "B"}, {"C"}, {ArgI("broadcast", 1)}));
  CHECK(FetchVec<int32_t>(ws, "C") == std::vector<int32_t>{10, 40, 30, 80});
  Feed<int64_t>(ws, "A64", {3}, {5, 6, 7});
  Feed<int64_t>(ws, "B64", {3}, {1, 2, 3});
  RunOp(ws, MakeOp("Sub", {"A64", "B64"}, {"B64"}));
  CHECK(FetchVec<int64_t>(ws, "B64") == std::vector<int64_t>{4, 4, 4});
  Feed<double>(ws, "Ad", {2}, {1.5, 3.0});
  Feed<double>(ws, "Bd", {2}, {0.5, 2.0});
  RunOp(ws, MakeOp("Div", {"Ad", "Bd"}, {"Cd"}));
  CHECK(FetchVec<double>(ws, "Cd") == std::vector<double>{3.0, 1.5});
  // In place on the smaller broadcast input: the output takes A's shape.
  Feed<float>(ws, "Af", {2, 3}, {1, 2, 3, 4, 5, 6});
  Feed<float>(ws, "Bf", {3}, {1, 1, 1});
  RunOp(ws, MakeOp("Add", {"Af", "Bf"}, {"Bf"}, {ArgI("broadcast", 1)}));
  CHECK(FetchVec<float>(ws, "Bf") == std::vector<float>{2, 3, 4, 5, 6, 7});
}

TEST_CASE("Elementwise errors name both shapes", "[ops][elementwise]") {
  Workspace ws;
  Feed<float>(ws, "A", {2, 3}, RandomVec(6, 1));
  Feed<float>(ws, "B", {3}, RandomVec(3, 2));
  RequireThrowsWith(ws, MakeOp("Add", {"A", "B"}, {"C"}), {"'A'", "[2, 3]", "'B'", "[3]", "broadcast"});
  Feed<float>(ws, "B4", {4}, RandomVec(4, 2));
  RequireThrowsWith(ws, MakeOp("Mul", {"A", "B4"}, {"C"}, {ArgI("broadcast", 1)}), {"'B4'", "[4]", "[2, 3]"});
  RequireThrowsWith(ws, MakeOp("Sub", {"A", "B"}, {"C"}, {ArgI("broadcast", 1), ArgI("axis", 0)}), {"'B'", "axis 0"});
  Feed<float>(ws, "Big", {2, 3, 4}, RandomVec(24, 2));
  RequireThrowsWith(ws, MakeOp("Div", {"A", "Big"}, {"C"}, {ArgI("broadcast", 1)}), {"'Big'", "more dims"});
  Feed<int32_t>(ws, "Ai", {2, 3}, std::vector<int32_t>(6, 1));
  RequireThrowsWith(ws, MakeOp("Add", {"A", "Ai"}, {"C"}), {"'Ai'", "int32", "float32"});
  CHECK_THROWS_AS(RunOp(ws, MakeOp("Add", {"A"}, {"C"})), Error);
}

TEST_CASE("Add/Sub/Mul/Div gradients, same shape and broadcast", "[ops][elementwise][grad]") {
  for (const std::string t : {"Add", "Sub", "Mul", "Div"}) {
    {
      Workspace ws;
      Feed<float>(ws, "A", {3, 4}, RandomVec(12, 1, 0.5f, 2.f));
      Feed<float>(ws, "B", {3, 4}, RandomVec(12, 2, 0.5f, 2.f));
      CheckGradient(ws, MakeOp(t, {"A", "B"}, {"C"}), {0, 1}, 0, 1e-3f);
    }
    {
      Workspace ws;
      Feed<float>(ws, "A", {2, 3, 4}, RandomVec(24, 3, 0.5f, 2.f));
      Feed<float>(ws, "B", {3}, RandomVec(3, 4, 0.5f, 2.f));
      CheckGradient(ws, MakeOp(t, {"A", "B"}, {"C"}, {ArgI("broadcast", 1), ArgI("axis", 1)}), {0, 1}, 0, 1e-3f);
    }
  }
}

TEST_CASE("Sum of n inputs, in place with input 0", "[ops][sum]") {
  Workspace ws;
  auto a = RandomVec(7, 1), b = RandomVec(7, 2), c = RandomVec(7, 3);
  Feed<float>(ws, "a", {7}, a);
  Feed<float>(ws, "b", {7}, b);
  Feed<float>(ws, "c", {7}, c);
  std::vector<double> want(7);
  for (int i = 0; i < 7; ++i) want[i] = (double)a[i] + b[i] + c[i];
  auto def = MakeOp("Sum", {"a", "b", "c"}, {"s"});
  RunOp(ws, def);
  CheckClose(FetchVec<float>(ws, "s"), want);
  CheckShapeInference(ws, def);
  RunOp(ws, MakeOp("Sum", {"a"}, {"s1"}));
  CHECK(FetchVec<float>(ws, "s1") == a);
  RunOp(ws, MakeOp("Sum", {"a", "b", "c"}, {"a"}));
  CheckClose(FetchVec<float>(ws, "a"), want);
  CHECK_THROWS_AS(RunOp(ws, MakeOp("Sum", {"a", "b"}, {"b"})), Error);  // in place only with input 0
  Feed<float>(ws, "d", {6}, RandomVec(6, 4));
  RequireThrowsWith(ws, MakeOp("Sum", {"a", "d"}, {"s"}), {"'d'", "[6]", "[7]"});
  Feed<int64_t>(ws, "i1", {2}, {1, 2});
  Feed<int64_t>(ws, "i2", {2}, {3, 4});
  RunOp(ws, MakeOp("Sum", {"i1", "i2"}, {"is"}));
  CHECK(FetchVec<int64_t>(ws, "is") == std::vector<int64_t>{4, 6});
  Workspace g;
  Feed<float>(g, "a", {2, 3}, RandomVec(6, 1));
  Feed<float>(g, "b", {2, 3}, RandomVec(6, 2));
  CheckGradient(g, MakeOp("Sum", {"a", "b"}, {"s"}), {0, 1});
}

TEST_CASE("Scale, in place, and its gradient", "[ops][scale]") {
  Workspace ws;
  auto x = RandomVec(11, 1);
  Feed<float>(ws, "x", {11}, x);
  std::vector<double> want;
  for (float v : x) want.push_back(2.5 * v);
  auto def = MakeOp("Scale", {"x"}, {"y"}, {ArgF("scale", 2.5f)});
  RunOp(ws, def);
  CheckClose(FetchVec<float>(ws, "y"), want);
  CheckShapeInference(ws, def);
  RunOp(ws, MakeOp("Scale", {"x"}, {"x"}, {ArgF("scale", 2.5f)}));
  CheckClose(FetchVec<float>(ws, "x"), want);
  Feed<int32_t>(ws, "i", {2}, {1, 2});
  RequireThrowsWith(ws, MakeOp("Scale", {"i"}, {"o"}), {"'i'", "int32"});
  CheckGradient(ws, MakeOp("Scale", {"y"}, {"z"}, {ArgF("scale", -1.5f)}), {0});
}

// The checker itself must catch a wrong gradient: a Scale whose registered gradient is off by 2x.
#include "core/gradient.h"
#include "operators/sum_scale_ops.h"
namespace {
REGISTER_CPU_OPERATOR(OpTestScaleWrongGrad, hetnet::ScaleOp<hetnet::CPUContext>);
class WrongScaleGradient final : public hetnet::GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("Scale", {GO(0)}, {GI(0)}, {ArgF("scale", 6.f)})};
  }
};
REGISTER_GRADIENT(OpTestScaleWrongGrad, WrongScaleGradient);
}  // namespace

TEST_CASE("CheckGradient detects a wrong gradient", "[ops][grad][!shouldfail]") {
  Workspace ws;
  Feed<float>(ws, "x", {3}, RandomVec(3, 1));
  CheckGradient(ws, MakeOp("OpTestScaleWrongGrad", {"x"}, {"y"}, {ArgF("scale", 3.f)}), {0});
}
