// Add/Sub/Mul/Div (same shape, Caffe2 legacy broadcast with axis, numpy broadcast), comparisons with
// numpy broadcast, Sum, Scale.
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
  // Without broadcast=1, shapes that do not broadcast numpy-style are refused naming both.
  Feed<float>(ws, "B2", {2}, RandomVec(2, 2));
  RequireThrowsWith(ws, MakeOp("Add", {"A", "B2"}, {"C"}), {"Add", "'A'", "[2, 3]", "'B2'", "[2]", "broadcast"});
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

// ---- numpy broadcasting (no broadcast argument, shapes differ) ----
namespace {
// Independent reference: for each output index (row-major over the broadcast shape, computed here
// dim by dim), each input's element is found by right-aligning its shape and using 0 where it has 1.
std::vector<int64_t> RefBroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    REQUIRE((da == db || da == 1 || db == 1));
    out[i] = da == 1 ? db : da;
  }
  return out;
}
int64_t RefOffset(const std::vector<int64_t>& idx, const std::vector<int64_t>& s) {
  const size_t lead = idx.size() - s.size();
  int64_t off = 0;
  for (size_t j = 0; j < s.size(); ++j) off = off * s[j] + (s[j] == 1 ? 0 : idx[lead + j]);
  return off;
}
template <typename T, typename F>
std::vector<double> RefNumpy(const std::vector<T>& a, const std::vector<int64_t>& as, const std::vector<T>& b,
                             const std::vector<int64_t>& bs, F f) {
  const auto out = RefBroadcastShape(as, bs);
  std::vector<double> c(Numel(out));
  std::vector<int64_t> idx(out.size());
  for (size_t k = 0; k < c.size(); ++k) {
    int64_t r = k;
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) { idx[d] = r % out[d]; r /= out[d]; }
    c[k] = f(a[RefOffset(idx, as)], b[RefOffset(idx, bs)]);
  }
  return c;
}
struct Shapes { std::vector<int64_t> a, b; };
const std::vector<Shapes> kNumpyShapes = {
    {{2, 3, 4}, {4}},          {{2, 1, 4}, {3, 1}},       {{}, {2, 3}},           {{2, 3}, {}},
    {{1}, {2, 3}},             {{2, 3}, {2, 1}},          {{3, 1, 5}, {1, 4, 1}}, {{4}, {3, 1}},
    {{2, 1, 3, 1, 2}, {4, 1, 5, 1}}, {{0, 3}, {3}},       {{2, 3, 4}, {2, 1, 4}},
};
template <typename T>
std::vector<T> IntVec(size_t n, unsigned seed, int lo, int hi) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(g));
  return v;
}
}  // namespace

TEST_CASE("Add/Sub/Mul/Div numpy broadcast, float32", "[ops][elementwise][numpy]") {
  for (const std::string t : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& s : kNumpyShapes) {
      Workspace ws;
      auto a = RandomVec(Numel(s.a), 1, 0.5f, 2.f), b = RandomVec(Numel(s.b), 2, 0.5f, 2.f);
      Feed<float>(ws, "A", s.a, a);
      Feed<float>(ws, "B", s.b, b);
      INFO(t << " A" << ShapeToString(s.a) << " B" << ShapeToString(s.b));
      auto def = MakeOp(t, {"A", "B"}, {"C"});
      RunOp(ws, def);
      CHECK(Fetch(ws, "C").shape() == RefBroadcastShape(s.a, s.b));
      CheckClose(FetchVec<float>(ws, "C"), RefNumpy(a, s.a, b, s.b, [&](double x, double y) { return Apply(t, x, y); }));
      CheckShapeInference(ws, def);
      // broadcast=0 given explicitly is the same rule.
      RunOp(ws, MakeOp(t, {"A", "B"}, {"C0"}, {ArgI("broadcast", 0)}));
      CHECK(FetchVec<float>(ws, "C0") == FetchVec<float>(ws, "C"));
      // In place on either input: C takes the broadcast shape, the values are unchanged.
      RunOp(ws, MakeOp(t, {"A", "B"}, {"A"}));
      CheckClose(FetchVec<float>(ws, "A"), RefNumpy(a, s.a, b, s.b, [&](double x, double y) { return Apply(t, x, y); }));
      Feed<float>(ws, "A", s.a, a);
      RunOp(ws, MakeOp(t, {"A", "B"}, {"B"}));
      CheckClose(FetchVec<float>(ws, "B"), RefNumpy(a, s.a, b, s.b, [&](double x, double y) { return Apply(t, x, y); }));
    }
  }
}

TEST_CASE("In place into a blob with spare capacity does not read overwritten elements", "[ops][elementwise][numpy]") {
  // A's blob first holds 64 elements, then [3, 1]: C = A + B of shape [3, 4] fits its old storage.
  Workspace ws;
  Feed<float>(ws, "A", {64}, RandomVec(64, 9));
  ws.CreateBlob("A")->GetMutableTensor(Device::CPU())->Resize({3, 1});
  float* ap = ws.CreateBlob("A")->GetMutableTensor(Device::CPU())->mutable_data<float>();
  const std::vector<float> a = {1, 2, 3}, b = {10, 20, 30, 40};
  std::copy(a.begin(), a.end(), ap);
  Feed<float>(ws, "B", {4}, b);
  RunOp(ws, MakeOp("Add", {"A", "B"}, {"A"}));
  CheckClose(FetchVec<float>(ws, "A"), RefNumpy(a, {3, 1}, b, {4}, [](double x, double y) { return x + y; }));
  // The legacy rule, in place on the smaller B whose blob has spare capacity.
  Feed<float>(ws, "X", {2, 3}, {1, 2, 3, 4, 5, 6});
  Feed<float>(ws, "Y", {64}, RandomVec(64, 3));
  ws.CreateBlob("Y")->GetMutableTensor(Device::CPU())->Resize({3});
  float* yp = ws.CreateBlob("Y")->GetMutableTensor(Device::CPU())->mutable_data<float>();
  yp[0] = 100; yp[1] = 200; yp[2] = 300;
  RunOp(ws, MakeOp("Add", {"X", "Y"}, {"Y"}, {ArgI("broadcast", 1)}));
  CHECK(FetchVec<float>(ws, "Y") == std::vector<float>{101, 202, 303, 104, 205, 306});
}

TEST_CASE("Numpy broadcast on int32, int64 and double", "[ops][elementwise][numpy]") {
  for (const std::string t : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& s : kNumpyShapes) {
      INFO(t << " A" << ShapeToString(s.a) << " B" << ShapeToString(s.b));
      Workspace ws;
      auto a32 = IntVec<int32_t>(Numel(s.a), 1, -20, 20), b32 = IntVec<int32_t>(Numel(s.b), 2, -5, 5);
      auto a64 = IntVec<int64_t>(Numel(s.a), 3, -20, 20), b64 = IntVec<int64_t>(Numel(s.b), 4, -5, 5);
      Feed<int32_t>(ws, "A", s.a, a32);
      Feed<int32_t>(ws, "B", s.b, b32);
      Feed<int64_t>(ws, "A64", s.a, a64);
      Feed<int64_t>(ws, "B64", s.b, b64);
      // Integer division truncates toward zero and x / 0 is 0 (device/divide.h).
      auto f = [&](double x, double y) {
        if (t != "Div") return Apply(t, x, y);
        return y == 0 ? 0.0 : std::trunc(x / y);
      };
      RunOp(ws, MakeOp(t, {"A", "B"}, {"C"}));
      RunOp(ws, MakeOp(t, {"A64", "B64"}, {"C64"}));
      const auto want32 = RefNumpy(a32, s.a, b32, s.b, f), want64 = RefNumpy(a64, s.a, b64, s.b, f);
      const auto got32 = FetchVec<int32_t>(ws, "C");
      const auto got64 = FetchVec<int64_t>(ws, "C64");
      REQUIRE(got32.size() == want32.size());
      REQUIRE(got64.size() == want64.size());
      for (size_t i = 0; i < got32.size(); ++i) CHECK(got32[i] == static_cast<int32_t>(want32[i]));
      for (size_t i = 0; i < got64.size(); ++i) CHECK(got64[i] == static_cast<int64_t>(want64[i]));
      CHECK(Fetch(ws, "C").dtype() == DataType::Int32);
      CHECK(Fetch(ws, "C64").dtype() == DataType::Int64);
    }
  }
  Workspace ws;
  Feed<double>(ws, "A", {2, 1}, {1.5, -2.0});
  Feed<double>(ws, "B", {3}, {0.5, 2.0, 4.0});
  RunOp(ws, MakeOp("Div", {"A", "B"}, {"C"}));
  CHECK(FetchVec<double>(ws, "C") == std::vector<double>{3.0, 0.75, 0.375, -4.0, -1.0, -0.5});
}

TEST_CASE("Numpy broadcast errors name the op and both shapes", "[ops][elementwise][numpy]") {
  Workspace ws;
  Feed<float>(ws, "A", {2, 3}, RandomVec(6, 1));
  Feed<float>(ws, "B", {4, 3, 2}, RandomVec(24, 2));
  for (const std::string t : {"Add", "Sub", "Mul", "Div", "EQ", "GT"}) {
    INFO(t);
    RequireThrowsWith(ws, MakeOp(t, {"A", "B"}, {"C"}), {t, "'A'", "[2, 3]", "'B'", "[4, 3, 2]"});
    const OpSchema* s = OpSchemaRegistry::Find(t);
    REQUIRE(s);
    CHECK_THROWS_AS(s->InferShapes(MakeOp(t, {"A", "B"}, {"C"}), {TensorInfo::Of({2, 3}, DataType::Float),
                                                                TensorInfo::Of({4, 3, 2}, DataType::Float)}),
                    Error);
  }
  // The gradient op checks dC against the broadcast shape.
  Feed<float>(ws, "B1", {3}, RandomVec(3, 2));
  Feed<float>(ws, "dC", {2, 2}, RandomVec(4, 2));
  RequireThrowsWith(ws, MakeOp("AddGradient", {"dC", "A", "B1"}, {"dA", "dB"}), {"'dC'", "[2, 2]", "[2, 3]"});
}

TEST_CASE("Comparisons with numpy broadcast", "[ops][elementwise][numpy]") {
  const std::vector<std::pair<std::string, bool (*)(double, double)>> cmps = {
      {"EQ", [](double a, double b) { return a == b; }}, {"NE", [](double a, double b) { return a != b; }},
      {"GT", [](double a, double b) { return a > b; }},  {"GE", [](double a, double b) { return a >= b; }},
      {"LT", [](double a, double b) { return a < b; }},  {"LE", [](double a, double b) { return a <= b; }}};
  for (const auto& [t, cmp] : cmps) {
    const auto& f = cmp;  // a lambda may not capture a structured binding before C++20
    for (const auto& s : kNumpyShapes) {
      INFO(t << " A" << ShapeToString(s.a) << " B" << ShapeToString(s.b));
      Workspace ws;
      auto a = IntVec<int64_t>(Numel(s.a), 5, -2, 2), b = IntVec<int64_t>(Numel(s.b), 6, -2, 2);
      auto af = IntVec<float>(Numel(s.a), 7, -2, 2), bf = IntVec<float>(Numel(s.b), 8, -2, 2);
      Feed<int64_t>(ws, "A", s.a, a);
      Feed<int64_t>(ws, "B", s.b, b);
      Feed<float>(ws, "Af", s.a, af);
      Feed<float>(ws, "Bf", s.b, bf);
      auto def = MakeOp(t, {"A", "B"}, {"C"});
      RunOp(ws, def);
      RunOp(ws, MakeOp(t, {"Af", "Bf"}, {"Cf"}));
      CheckShapeInference(ws, def);
      const auto want = RefNumpy(a, s.a, b, s.b, [&](double x, double y) { return f(x, y) ? 1.0 : 0.0; });
      const auto wantf = RefNumpy(af, s.a, bf, s.b, [&](double x, double y) { return f(x, y) ? 1.0 : 0.0; });
      const Tensor c = Fetch(ws, "C"), cf = Fetch(ws, "Cf");
      CHECK(c.dtype() == DataType::Bool);
      CHECK(c.shape() == RefBroadcastShape(s.a, s.b));
      REQUIRE(c.numel() == static_cast<int64_t>(want.size()));
      REQUIRE(cf.numel() == static_cast<int64_t>(wantf.size()));
      for (int64_t i = 0; i < c.numel(); ++i) CHECK(c.data<bool>()[i] == (want[i] != 0));
      for (int64_t i = 0; i < cf.numel(); ++i) CHECK(cf.data<bool>()[i] == (wantf[i] != 0));
    }
  }
}

TEST_CASE("Add/Sub/Mul/Div gradients with numpy broadcast", "[ops][elementwise][numpy][grad]") {
  const std::vector<Shapes> shapes = {{{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{1}, {2, 3}}, {{}, {2, 3}},
                                      {{3, 1, 2}, {1, 4, 1}}, {{2, 3}, {2, 1}}};
  for (const std::string t : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& s : shapes) {
      INFO(t << " A" << ShapeToString(s.a) << " B" << ShapeToString(s.b));
      Workspace ws;
      Feed<float>(ws, "A", s.a, RandomVec(Numel(s.a), 3, 0.5f, 2.f));
      Feed<float>(ws, "B", s.b, RandomVec(Numel(s.b), 4, 0.5f, 2.f));
      CheckGradient(ws, MakeOp(t, {"A", "B"}, {"C"}), {0, 1}, 0, 1e-3f);
    }
  }
  // In place: dA written over dC's blob (the gradient op's allowed in-place pair).
  Workspace ws;
  const std::vector<float> dc = RandomVec(24, 5), b = RandomVec(4, 6, 0.5f, 2.f);
  Feed<float>(ws, "dC", {2, 3, 4}, dc);
  Feed<float>(ws, "A", {2, 1, 4}, RandomVec(8, 7));
  Feed<float>(ws, "B", {3, 1}, RandomVec(3, 8));
  RunOp(ws, MakeOp("AddGradient", {"dC", "A", "B"}, {"dC", "dB"}));
  const auto da = FetchVec<float>(ws, "dC");
  REQUIRE(da.size() == 8);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      double want = 0;
      for (int j = 0; j < 3; ++j) want += dc[(i * 3 + j) * 4 + k];
      CHECK(std::abs(da[i * 4 + k] - want) <= 1e-5 * std::max(1.0, std::abs(want)));
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
