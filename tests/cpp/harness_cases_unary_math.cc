// Harness cases for Exp, Log, Abs, Sqr, Negative, Pow (operators/unary_math_ops.*) and the
// comparisons EQ, NE, GT, GE, LT, LE (operators/comparison_ops.*). References are naive float64
// loops from Caffe2's definitions; the comparisons' reference indexes B from A's coordinates (an
// independent reading of the legacy broadcast rule). NaN rows follow docs/nan_inf.md's IEEE policy:
// NaN propagates through the arithmetic ops, a comparison with NaN is false except NE.
//
// Rows whose outputs hold +-Inf use a Check (exact, Inf == Inf) and run on CPU only: the harness's
// Compare computes |got - want|, which is NaN for two equal infinities, so neither the reference
// column nor the CUDA-vs-CPU column can hold them.
//
// A few TEST_CASEs at the end ([unary_math]) check what the harness cannot: refusals and their
// messages, and the gradient ops generated for in-place defs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "core/autodiff.h"
#include "core/error.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

double ArgF(const caffe2::OperatorDef& def, const std::string& name, double dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.has_f() ? a.f() : static_cast<double>(a.i());
  return dflt;
}

template <typename F>
RefFn Unary(F f, DataType out = DataType::Float) {
  return [f, out](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor y(in[0].shape, out);
    for (int64_t i = 0; i < y.numel(); ++i) y[i] = f(in[0][i]);
    return RefTensors{y};
  };
}

RefFn PowRef() {
  return [](const caffe2::OperatorDef& def, const RefTensors& in) {
    const double e = static_cast<float>(ArgF(def, "exponent", 0));
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.numel(); ++i) y[i] = std::pow(in[0][i], e);
    return RefTensors{y};
  };
}

// Exact expected outputs (NaN matches NaN, infinities themselves, finite values within 1e-6 relative).
CheckFn Exactly(std::vector<double> want) {
  return [want](const caffe2::OperatorDef& def, const RefTensors&, const RefTensors& out) -> std::string {
    std::ostringstream ss;
    if (out.empty() || out[0].numel() != static_cast<int64_t>(want.size())) return "wrong output size";
    for (size_t k = 0; k < want.size(); ++k) {
      const double g = out[0][k], w = want[k];
      const bool ok = std::isnan(w) ? std::isnan(g)
                      : std::isinf(w) ? g == w
                                      : std::abs(g - w) <= 1e-6 * std::max(1.0, std::abs(w));
      if (!ok) ss << (ss.tellp() > 0 ? "; " : "") << def.output(0) << "[" << k << "] = " << g << ", expected " << w;
    }
    return ss.str();
  };
}

// Comparison reference: A's coordinates at dims [axis, axis + B.ndim) index B (B dims of 1: index 0);
// a one-element B broadcasts everywhere.
template <typename F>
RefFn CompareRef(F f) {
  return [f](const caffe2::OperatorDef& def, const RefTensors& in) {
    const RefTensor &A = in[0], &B = in[1];
    const int na = static_cast<int>(A.shape.size()), nb = static_cast<int>(B.shape.size());
    int axis = static_cast<int>(ArgF(def, "axis", -1));
    if (axis < 0) axis = na - nb;
    RefTensor C(A.shape, DataType::Bool);
    std::vector<int64_t> coord(na);
    for (int64_t i = 0; i < C.numel(); ++i) {
      int64_t r = i;
      for (int d = na - 1; d >= 0; --d) {
        coord[d] = r % A.shape[d];
        r /= A.shape[d];
      }
      int64_t j = 0;
      if (B.numel() != 1)
        for (int d = 0; d < nb; ++d) j = j * B.shape[d] + (B.shape[d] == 1 ? 0 : coord[axis + d]);
      C[i] = f(A[i], B[j]) ? 1.0 : 0.0;
    }
    return RefTensors{C};
  };
}

// Values in {-1, -0.5, 0, 0.5, 1} so that equal pairs occur.
std::vector<double> Steps(int64_t n, int mul, int add) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = (((i * mul + add) % 5) - 2) * 0.5;
  return v;
}

struct Cmp {
  const char* name;
  bool (*f)(double, double);
};
const Cmp kComparisons[] = {
    {"EQ", [](double a, double b) { return a == b; }}, {"NE", [](double a, double b) { return a != b; }},
    {"GT", [](double a, double b) { return a > b; }},  {"GE", [](double a, double b) { return a >= b; }},
    {"LT", [](double a, double b) { return a < b; }},  {"LE", [](double a, double b) { return a <= b; }},
};

}  // namespace

HN_OP_CASES(UnaryMath) {
  const DataType f64 = DataType::Double, i32 = DataType::Int32, i64 = DataType::Int64;
  auto exp_ = [](double x) { return std::exp(x); };
  auto log_ = [](double x) { return std::log(x); };
  auto abs_ = [](double x) { return std::abs(x); };
  auto sqr_ = [](double x) { return x * x; };
  auto neg_ = [](double x) { return -x; };
  const double i32lo = std::numeric_limits<int32_t>::lowest(), i32hi = std::numeric_limits<int32_t>::max();
  const double i64lo = static_cast<double>(std::numeric_limits<int64_t>::lowest());
  std::vector<Case> c = {
      // Exp
      Case("[-3, 3]").Def(Op("Exp", {"X"}, {"Y"})).Inputs({In({3, 7}).Range(-3, 3)}).Ref(Unary(exp_)),
      Case("in place").Def(Op("Exp", {"X"}, {"X"})).Inputs({In({2, 5}).Range(-2, 2)}).Ref(Unary(exp_)),
      Case("empty").Def(Op("Exp", {"X"}, {"Y"})).Inputs({In({0, 3})}).Ref(Unary(exp_)),
      Case("NaN propagates").Def(Op("Exp", {"X"}, {"Y"})).Inputs({In({4}).Values({kNaN, 0, -1, 2})})
          .Ref(Unary(exp_)).NoGrad(),
      Case("+-Inf and overflow").Def(Op("Exp", {"X"}, {"Y"})).Inputs({In({4}).Values({kInf, -kInf, 100, -200})})
          .Check(Exactly({kInf, 0, kInf, 0})).NoGrad().NoShapeCheck().CpuOnly(),
      // Log
      Case("[0.5, 3]").Def(Op("Log", {"X"}, {"Y"})).Inputs({In({3, 7}).Range(0.5, 3)}).Ref(Unary(log_))
          .GradTol(1e-2, 1e-3),
      Case("in place").Def(Op("Log", {"X"}, {"X"})).Inputs({In({2, 5}).Range(0.5, 3)}).Ref(Unary(log_))
          .GradTol(1e-2, 1e-3),
      Case("NaN and negative give NaN").Def(Op("Log", {"X"}, {"Y"})).Inputs({In({4}).Values({kNaN, -1, 1, 0.5})})
          .Ref(Unary(log_)).NoGrad(),
      Case("0 and +-Inf").Def(Op("Log", {"X"}, {"Y"})).Inputs({In({4}).Values({0, kInf, -kInf, -0.0})})
          .Check(Exactly({-kInf, kInf, kNaN, -kInf})).NoGrad().NoShapeCheck().CpuOnly(),
      // Abs (the gradient has a kink at 0: Distinct keeps values away from it)
      Case("distinct").Def(Op("Abs", {"X"}, {"Y"})).Inputs({In({4, 5}).Distinct()}).Ref(Unary(abs_))
          .GradTol(1e-2, 1e-3),
      Case("NaN propagates").Def(Op("Abs", {"X"}, {"Y"})).Inputs({In({3}).Values({kNaN, -2, 0})})
          .Ref(Unary(abs_)).NoGrad(),
      Case("+-Inf").Def(Op("Abs", {"X"}, {"Y"})).Inputs({In({2}).Values({kInf, -kInf})})
          .Check(Exactly({kInf, kInf})).NoGrad().NoShapeCheck().CpuOnly(),
      // Sqr
      Case("[-2, 2]").Def(Op("Sqr", {"X"}, {"Y"})).Inputs({In({3, 7}).Range(-2, 2)}).Ref(Unary(sqr_)),
      Case("in place (forward)").Def(Op("Sqr", {"X"}, {"X"})).Inputs({In({6}).Range(-2, 2)}).Ref(Unary(sqr_))
          .NoGrad(),
      Case("NaN propagates").Def(Op("Sqr", {"X"}, {"Y"})).Inputs({In({3}).Values({kNaN, -3, 0.5})})
          .Ref(Unary(sqr_)).NoGrad(),
      Case("+-Inf and overflow").Def(Op("Sqr", {"X"}, {"Y"})).Inputs({In({3}).Values({-kInf, kInf, 1e20})})
          .Check(Exactly({kInf, kInf, kInf})).NoGrad().NoShapeCheck().CpuOnly(),
      // Negative
      Case("float32").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({3, 7})}).Ref(Unary(neg_)),
      Case("in place").Def(Op("Negative", {"X"}, {"X"})).Inputs({In({2, 4})}).Ref(Unary(neg_)),
      Case("float64").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({3, 4}, f64)}).Ref(Unary(neg_, f64)),
      Case("int32").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({3, 4}, i32).Range(-100, 100)})
          .Ref(Unary(neg_, i32)),
      Case("int64").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({3, 4}, i64).Range(-100, 100)})
          .Ref(Unary(neg_, i64)),
      Case("int32 lowest wraps").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({4}, i32).Values({i32lo, i32hi, 0, -5})})
          .Ref([=](const caffe2::OperatorDef&, const RefTensors&) {
            return RefTensors{RefTensor({4}, {i32lo, -i32hi, 0, 5}, i32)};
          }),
      Case("int64 lowest wraps").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({2}, i64).Values({i64lo, 7})})
          .Ref([=](const caffe2::OperatorDef&, const RefTensors&) {
            return RefTensors{RefTensor({2}, {i64lo, -7}, i64)};
          }),
      Case("NaN propagates").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({2}).Values({kNaN, 1})})
          .Ref(Unary(neg_)).NoGrad(),
      Case("+-Inf").Def(Op("Negative", {"X"}, {"Y"})).Inputs({In({2}).Values({kInf, -kInf})})
          .Check(Exactly({-kInf, kInf})).NoGrad().NoShapeCheck().CpuOnly(),
      // Pow
      Case("exponent 2").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 2.f)})).Inputs({In({3, 7})}).Ref(PowRef()),
      Case("exponent 3 (int arg)").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 3)})).Inputs({In({3, 5}).Range(-2, 2)})
          .Ref(PowRef()),
      Case("exponent 2.5").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 2.5f)})).Inputs({In({3, 5}).Range(0.5, 2)})
          .Ref(PowRef()),
      Case("exponent -1").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", -1.f)})).Inputs({In({3, 5}).Range(0.5, 2)})
          .Ref(PowRef()).GradTol(1e-2, 1e-3),
      Case("exponent 0.5").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 0.5f)})).Inputs({In({3, 5}).Range(0.5, 2)})
          .Ref(PowRef()),
      Case("exponent 0").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 0.f)})).Inputs({In({2, 3}).Range(0.5, 2)})
          .Ref(PowRef()),
      Case("in place, exponent 2.5, X > 0").Def(Op("Pow", {"X"}, {"X"}, {Arg("exponent", 2.5f)}))
          .Inputs({In({2, 5}).Range(0.5, 2)}).Ref(PowRef()),
      Case("NaN propagates; negative ^ 0.5 is NaN").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 0.5f)}))
          .Inputs({In({3}).Values({kNaN, -1, 4})}).Ref(PowRef()).NoGrad(),
      Case("NaN ^ 0 is 1 (C's pow)").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 0.f)}))
          .Inputs({In({2}).Values({kNaN, 3})}).Ref(PowRef()).NoGrad(),
      Case("0 ^ -1 and +-Inf").Def(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", -1.f)}))
          .Inputs({In({4}).Values({0, kInf, -kInf, 2})}).Check(Exactly({kInf, 0, -0.0, 0.5})).NoGrad()
          .NoShapeCheck().CpuOnly(),
  };
  return c;
}

HN_OP_CASES(Comparisons) {
  const DataType f64 = DataType::Double, i32 = DataType::Int32, i64 = DataType::Int64, b8 = DataType::Bool;
  std::vector<Case> c;
  for (const Cmp& k : kComparisons) {
    const std::string t = k.name;
    auto ref = CompareRef(k.f);
    c.push_back(Case("float32 same shape, ties").Def(Op(t, {"A", "B"}, {"C"}))
                    .Inputs({In({3, 4}).Values(Steps(12, 7, 1)), In({3, 4}).Values(Steps(12, 3, 2))}).Ref(ref));
    c.push_back(Case("float32 random").Def(Op(t, {"A", "B"}, {"C"})).Inputs({In({2, 3, 4}), In({2, 3, 4})}).Ref(ref));
    c.push_back(Case("float64 same shape").Def(Op(t, {"A", "B"}, {"C"}))
                    .Inputs({In({5}, f64).Values({1, 2, 3, -1, 0.25}), In({5}, f64).Values({1, 3, 2, -1, 0.5})}).Ref(ref));
    c.push_back(Case("int32 same shape").Def(Op(t, {"A", "B"}, {"C"}))
                    .Inputs({In({4, 5}, i32).Range(-2, 2), In({4, 5}, i32).Range(-2, 2)}).Ref(ref).Seed(3));
    c.push_back(Case("int64 broadcast trailing").Def(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
                    .Inputs({In({2, 3, 4}, i64).Range(-2, 2), In({4}, i64).Range(-2, 2)}).Ref(ref));
    c.push_back(Case("float32 broadcast axis 1").Def(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1), Arg("axis", 1)}))
                    .Inputs({In({2, 3, 4}).Values(Steps(24, 1, 0)), In({3}).Values({-0.5, 0, 0.5})}).Ref(ref));
    c.push_back(Case("float64 broadcast [3, 1] at axis 1").Def(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1), Arg("axis", 1)}))
                    .Inputs({In({2, 3, 2}, f64).Values(Steps(12, 2, 1)), In({3, 1}, f64).Values({-0.5, 0, 1})}).Ref(ref));
    c.push_back(Case("int32 one-element B").Def(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
                    .Inputs({In({3, 3}, i32).Range(-2, 2), In({1}, i32).Values({0})}).Ref(ref));
    c.push_back(Case("bool same shape").Def(Op(t, {"A", "B"}, {"C"}))
                    .Inputs({In({2, 2}, b8).Values({0, 0, 1, 1}), In({2, 2}, b8).Values({0, 1, 0, 1})}).Ref(ref));
    c.push_back(Case("empty A, broadcast").Def(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
                    .Inputs({In({0, 3}), In({3})}).Ref(ref));
    c.push_back(Case("NaN false except NE; +-Inf ordered").Def(Op(t, {"A", "B"}, {"C"}))
                    .Inputs({In({7}).Values({kNaN, kNaN, 1, kInf, -kInf, 0, -kInf}),
                             In({7}).Values({kNaN, 1, kNaN, kInf, kInf, -0.0, -kInf})})
                    .Ref(ref));
    c.push_back(Case("NaN one-element B").Def(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
                    .Inputs({In({2, 3}, f64).Values({kNaN, 0, 1, -1, kInf, 2}), In({1}, f64).Values({kNaN})}).Ref(ref));
  }
  return c;
}

}  // namespace harness
}  // namespace hetnet

// ---- what the harness cannot express ----
namespace {
using hetnet::harness::Arg;
using hetnet::harness::Op;

hetnet::ErrorKind CreateError(const caffe2::OperatorDef& def, std::string* what) {
  hetnet::Workspace ws;
  for (const auto& in : def.input()) {
    hetnet::Tensor t({2}, hetnet::DataType::Float);
    t.mutable_data<float>();
    *ws.CreateBlob(in)->GetMutable<hetnet::Tensor>() = t;
  }
  try {
    hetnet::CreateOperator(def, &ws);
  } catch (const hetnet::Error& e) {
    *what = e.what();
    return e.kind();
  }
  return static_cast<hetnet::ErrorKind>(-1);
}

std::vector<caffe2::OperatorDef> GradientDefs(const caffe2::OperatorDef& def, std::vector<std::string> gout) {
  const auto* maker = hetnet::GradientRegistry::Find(def.type());
  REQUIRE(maker != nullptr);
  auto m = (*maker)(def, gout);
  return m->GetGradientDefs();
}
}  // namespace

TEST_CASE("Pow refuses Caffe2's two-input form with kUnsupported naming the op", "[unary_math]") {
  std::string what;
  CHECK(CreateError(Op("Pow", {"X", "E"}, {"Y"}), &what) == hetnet::ErrorKind::kUnsupported);
  CHECK_THAT(what, Catch::Contains("Pow") && Catch::Contains("two-input") && Catch::Contains("'E'") &&
                       Catch::Contains("exponent"));
  CHECK(CreateError(Op("Pow", {"X", "E"}, {"Y"}, {Arg("broadcast", 1)}), &what) == hetnet::ErrorKind::kUnsupported);
  // The gradient maker refuses it the same way.
  CHECK_THROWS_WITH(GradientDefs(Op("Pow", {"X", "E"}, {"Y"}), {"Y_grad"}), Catch::Contains("two-input"));
}

TEST_CASE("Pow without the exponent argument is refused", "[unary_math]") {
  std::string what;
  CHECK(CreateError(Op("Pow", {"X"}, {"Y"}), &what) == hetnet::ErrorKind::kInvalidArgument);
  CHECK_THAT(what, Catch::Contains("Pow") && Catch::Contains("'exponent'"));
}

TEST_CASE("in-place gradients: Sqr refused, Pow and Log read a temporary, not the shared gradient blob",
          "[unary_math]") {
  CHECK_THROWS_WITH(GradientDefs(Op("Sqr", {"X"}, {"X"}), {"X_grad"}), Catch::Contains("in-place Sqr"));
  CHECK_THROWS_WITH(GradientDefs(Op("Pow", {"X"}, {"X"}, {Arg("exponent", 0.f)}), {"X_grad"}),
                    Catch::Contains("in-place Pow"));
  // In place, dY and dX are both X_grad: dY must be read by the first op that writes X_grad (or an
  // earlier one). The harness's "in place" Pow and Log cases check the numbers.
  for (const auto& def : {Op("Pow", {"X"}, {"X"}, {Arg("exponent", 3.f)}), Op("Log", {"X"}, {"X"})}) {
    INFO(def.type());
    auto ops = GradientDefs(def, {"X_grad"});
    bool read = false, written = false;
    for (const auto& g : ops) {
      for (const auto& i : g.input()) read = read || (!written && i == "X_grad");
      for (const auto& o : g.output()) written = written || o == "X_grad";
    }
    CHECK(read);
    CHECK(written);
  }
  // Not in place: Caffe2's defs.
  auto pow = GradientDefs(Op("Pow", {"X"}, {"Y"}, {Arg("exponent", 3.f)}), {"Y_grad"});
  REQUIRE(pow.size() == 3);
  CHECK(pow[0].type() == "Pow");
  CHECK(pow[0].arg(0).f() == 2.f);
  CHECK(pow[1].type() == "Mul");
  CHECK(pow[2].type() == "Scale");
  CHECK(pow[2].arg(0).f() == 3.f);
  auto exp = GradientDefs(Op("Exp", {"X"}, {"Y"}), {"Y_grad"});
  REQUIRE(exp.size() == 1);
  CHECK(exp[0].type() == "Mul");
  auto log = GradientDefs(Op("Log", {"X"}, {"Y"}), {"Y_grad"});
  REQUIRE(log.size() == 1);
  CHECK(log[0].type() == "Div");
}

TEST_CASE("comparisons: no gradient, BOOL output, same-dtype and shape rules", "[unary_math]") {
  for (const char* t : {"EQ", "NE", "GT", "GE", "LT", "LE"}) {
    INFO(t);
    CHECK(hetnet::GradientRegistry::HasNoGradient(t));
    const hetnet::OpSchema* s = hetnet::OpSchemaRegistry::Find(t);
    REQUIRE(s != nullptr);
    CHECK_FALSE(s->doc().empty());
    auto inf = s->InferShapes(Op(t, {"A", "B"}, {"C"}, {Arg("broadcast", 1)}),
                              {hetnet::TensorInfo::Of({2, 3}, hetnet::DataType::Float),
                               hetnet::TensorInfo::Of({3}, hetnet::DataType::Float)});
    REQUIRE(inf.size() == 1);
    CHECK(inf[0].dtype == hetnet::DataType::Bool);
    CHECK(inf[0].dims == std::vector<int64_t>{2, 3});
    // Without broadcast=1, shapes that do not broadcast numpy-style are refused by inference.
    CHECK_THROWS_WITH(s->InferShapes(Op(t, {"A", "B"}, {"C"}), {hetnet::TensorInfo::Of({2, 3}, hetnet::DataType::Float),
                                                                 hetnet::TensorInfo::Of({2}, hetnet::DataType::Float)}),
                      Catch::Contains("broadcast=0"));
    // In place is refused (the output is BOOL).
    CHECK_THROWS_WITH(s->Verify(Op(t, {"A", "B"}, {"A"})), Catch::Contains("in place"));
  }
  // Mixed dtypes are refused with both blobs named.
  hetnet::Workspace ws;
  hetnet::Tensor a({2}, hetnet::DataType::Float), b({2}, hetnet::DataType::Int32);
  a.mutable_data<float>();
  b.mutable_data<int32_t>();
  *ws.CreateBlob("A")->GetMutable<hetnet::Tensor>() = a;
  *ws.CreateBlob("B")->GetMutable<hetnet::Tensor>() = b;
  auto op = hetnet::CreateOperator(Op("GT", {"A", "B"}, {"C"}), &ws);
  CHECK_THROWS_WITH(op->Run(), Catch::Contains("'A'") && Catch::Contains("'B'") && Catch::Contains("same dtype"));
}

// Through the net-level autodiff, where an in-place op's input and output gradients get one name:
// Log(X) -> X or Pow(X, exponent 3) -> X, then Negative(X) -> Y; the loss is sum(Y).
TEST_CASE("autodiff through an in-place Log or Pow matches the analytic gradient", "[unary_math]") {
  const std::vector<float> x = {0.5f, 1.5f, 2.f, 3.f};
  for (int which = 0; which < 2; ++which) {
    caffe2::NetDef net;
    net.set_name("inplace_unary");
    net.add_external_input("X");
    *net.add_op() = which == 0 ? Op("Log", {"X"}, {"X"}) : Op("Pow", {"X"}, {"X"}, {Arg("exponent", 3.f)});
    *net.add_op() = Op("Negative", {"X"}, {"Y"});
    INFO(net.op(0).type());
    auto grads = hetnet::AddGradientOperators(&net, {"Y"});
    REQUIRE(grads.count("X"));
    hetnet::Workspace ws;
    hetnet::Tensor t({4}, hetnet::DataType::Float);
    std::copy(x.begin(), x.end(), t.mutable_data<float>());
    *ws.CreateBlob("X")->GetMutable<hetnet::Tensor>() = t;
    ws.RunNetOnce(net);
    const hetnet::Tensor& g = ws.GetBlobOrThrow(grads["X"]).GetTensor();
    REQUIRE(g.numel() == 4);
    for (int i = 0; i < 4; ++i) {
      const double want = which == 0 ? -1.0 / x[i] : -3.0 * x[i] * x[i];
      INFO("element " << i);
      CHECK(g.data<float>()[i] == Approx(want).epsilon(1e-4));
    }
  }
}
