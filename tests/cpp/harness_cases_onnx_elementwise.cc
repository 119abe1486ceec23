// Harness cases for ONNX's elementwise ops added for the importer: Ceil, Floor, Round, the
// trigonometric / hyperbolic functions, IsNaN, IsInf (operators/float_unary_ops.*), BitwiseAnd /
// Or / Xor / Not (operators/bitwise_ops.*), OnnxMod and OnnxPow (operators/onnx_mod_op.*).
// References are float64 <cmath> calls and, for the bitwise ops, the bits computed digit by digit
// (x mod 2, halved) on the two's complement value, so not the kernels' C++ operators. The [onnx_elementwise] TEST_CASEs check refusals (wrong dtypes, shapes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const DataType f64 = DataType::Double;

RefFn UnaryRef(double (*f)(double), DataType out) {
  return [f, out](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor y(in[0].shape, out);
    for (int64_t i = 0; i < y.numel(); ++i) y[i] = f(in[0][i]);
    return RefTensors{y};
  };
}

// Round half to even, written out (not nearbyint).
double HalfEven(double x) {
  const double f = std::floor(x), d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

struct Fn {
  const char* op;
  double (*f)(double);
  double lo, hi;
};
const Fn kFns[] = {
    {"Ceil", [](double x) { return std::ceil(x); }, -3, 3},    {"Floor", [](double x) { return std::floor(x); }, -3, 3},
    {"Round", HalfEven, -3, 3},                                 {"Sin", [](double x) { return std::sin(x); }, -4, 4},
    {"Cos", [](double x) { return std::cos(x); }, -4, 4},      {"Tan", [](double x) { return std::tan(x); }, -1.2, 1.2},
    {"Asin", [](double x) { return std::asin(x); }, -1, 1},    {"Acos", [](double x) { return std::acos(x); }, -1, 1},
    {"Atan", [](double x) { return std::atan(x); }, -5, 5},    {"Sinh", [](double x) { return std::sinh(x); }, -3, 3},
    {"Cosh", [](double x) { return std::cosh(x); }, -3, 3},    {"Asinh", [](double x) { return std::asinh(x); }, -5, 5},
    {"Acosh", [](double x) { return std::acosh(x); }, 1, 5},   {"Atanh", [](double x) { return std::atanh(x); }, -0.9, 0.9},
};

// The bits of integer values (two's complement), combined, back to a value of `width` bits. The
// cases' values fit in 31 bits, so the bits of int64 above 32 repeat the sign bit: 32 digits suffice
// (and keep the doubles exact).
double BitwiseRef(const char* op, double a, double b, int width, bool is_signed) {
  const int bits = std::min(width, 32);
  const double mod = std::ldexp(1.0, bits);
  auto digits = [&](double v) {  // v mod 2^bits in [0, 2^bits)
    double u = std::fmod(v, mod);
    return u < 0 ? u + mod : u;
  };
  double x = digits(a), y = digits(b), r = 0, place = 1;
  for (int k = 0; k < bits; ++k, place *= 2) {
    const int p = static_cast<int>(std::fmod(x, 2.0)), q = static_cast<int>(std::fmod(y, 2.0));
    x = std::floor(x / 2);
    y = std::floor(y / 2);
    const std::string o = op;
    const int bit = o == "BitwiseAnd" ? (p & q) : o == "BitwiseOr" ? (p | q) : o == "BitwiseXor" ? (p ^ q) : 1 - p;
    r += bit * place;
  }
  return is_signed && r >= mod / 2 ? r - mod : r;
}

int Bits(DataType t) {
  return t == DataType::Int8 || t == DataType::UInt8 ? 8 : t == DataType::Int16 || t == DataType::UInt16 ? 16
         : t == DataType::Int32 ? 32 : 64;
}
bool Signed(DataType t) { return t != DataType::UInt8 && t != DataType::UInt16; }

// Numpy broadcasting of two inputs, the reference's own index walk.
RefFn BitwiseBinaryRef(const char* op) {
  return [op](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor &A = in[0], &B = in[1];
    const size_t n = std::max(A.shape.size(), B.shape.size());
    std::vector<int64_t> out(n), ca(n, 1), cb(n, 1);
    for (size_t i = 0; i < n; ++i) {
      ca[i] = i < n - A.shape.size() ? 1 : A.shape[i - (n - A.shape.size())];
      cb[i] = i < n - B.shape.size() ? 1 : B.shape[i - (n - B.shape.size())];
      out[i] = std::max(ca[i], cb[i]);
    }
    RefTensor C(out, A.dtype);
    for (int64_t k = 0; k < C.numel(); ++k) {
      int64_t r = k, ia = 0, ib = 0, sa = 1, sb = 1;
      for (int d = static_cast<int>(n) - 1; d >= 0; --d) {
        const int64_t c = r % out[d];
        r /= out[d];
        ia += (ca[d] == 1 ? 0 : c) * sa;
        ib += (cb[d] == 1 ? 0 : c) * sb;
        sa *= ca[d];
        sb *= cb[d];
      }
      C[k] = BitwiseRef(op, A[ia], B[ib], Bits(A.dtype), Signed(A.dtype));
    }
    return RefTensors{C};
  };
}

}  // namespace

HN_OP_CASES(OnnxFloatUnary) {
  std::vector<Case> c;
  for (const Fn& f : kFns) {
    c.push_back(Case("float32").Def(Op(f.op, {"X"}, {"Y"})).Inputs({In({3, 5}).Range(f.lo, f.hi)})
                    .Ref(UnaryRef(f.f, DataType::Float)).NoGrad().CpuOnly());
    c.push_back(Case("float64, in place").Def(Op(f.op, {"X"}, {"X"})).Inputs({In({7}, f64).Range(f.lo, f.hi)})
                    .Ref(UnaryRef(f.f, f64)).NoGrad().CpuOnly());
    c.push_back(Case("NaN propagates").Def(Op(f.op, {"X"}, {"Y"})).Inputs({In({2}).Values({kNaN, f.lo})})
                    .Ref(UnaryRef(f.f, DataType::Float)).NoGrad().CpuOnly());
  }
  c.push_back(Case("halves to even").Def(Op("Round", {"X"}, {"Y"}))
                  .Inputs({In({8}).Values({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 0.50001})})
                  .Ref(UnaryRef(HalfEven, DataType::Float)).NoGrad().CpuOnly());
  c.push_back(Case("outside the domain is NaN").Def(Op("Asin", {"X"}, {"Y"})).Inputs({In({2}).Values({2, -1.5})})
                  .Ref(UnaryRef([](double) { return kNaN; }, DataType::Float)).NoGrad().CpuOnly());
  c.push_back(Case("empty").Def(Op("Cos", {"X"}, {"Y"})).Inputs({In({0, 4})})
                  .Ref(UnaryRef([](double x) { return std::cos(x); }, DataType::Float)).NoGrad().CpuOnly());
  return c;
}

HN_OP_CASES(OnnxFloatPredicates) {
  auto pred = [](bool nan, bool pos, bool neg) {
    return [=](const caffe2::OperatorDef&, const RefTensors& in) {
      RefTensor y(in[0].shape, DataType::Bool);
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double v = in[0][i];
        y[i] = nan ? std::isnan(v) : (v == kInf && pos) || (v == -kInf && neg);
      }
      return RefTensors{y};
    };
  };
  const std::vector<double> v = {kNaN, kInf, -kInf, 0, -1.5, 3e38, kNaN, 1};
  std::vector<Case> c = {
      Case("float32").Def(Op("IsNaN", {"X"}, {"Y"})).Inputs({In({2, 4}).Values(v)}).Ref(pred(true, 0, 0)),
      Case("float64").Def(Op("IsNaN", {"X"}, {"Y"})).Inputs({In({8}, f64).Values(v)}).Ref(pred(true, 0, 0)),
      Case("float16").Def(Op("IsNaN", {"X"}, {"Y"})).Inputs({In({8}, DataType::Float16).Values(v)}).Ref(pred(true, 0, 0)),
      Case("both signs").Def(Op("IsInf", {"X"}, {"Y"})).Inputs({In({2, 4}).Values(v)}).Ref(pred(false, 1, 1)),
      Case("positive only").Def(Op("IsInf", {"X"}, {"Y"}, {Arg("detect_negative", 0)})).Inputs({In({8}, f64).Values(v)})
          .Ref(pred(false, 1, 0)),
      Case("negative only").Def(Op("IsInf", {"X"}, {"Y"}, {Arg("detect_positive", 0)})).Inputs({In({8}).Values(v)})
          .Ref(pred(false, 0, 1)),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(OnnxBitwise) {
  std::vector<Case> c;
  for (DataType t : {DataType::Int8, DataType::Int16, DataType::Int32, DataType::Int64, DataType::UInt8,
                     DataType::UInt16}) {
    const double lo = Signed(t) ? -120 : 0, hi = t == DataType::Int8 ? 120 : t == DataType::UInt8 ? 255 : 60000;
    const double hi2 = Signed(t) && t != DataType::Int8 ? 30000 : hi;
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
      c.push_back(Case(std::string(DataTypeName(t)) + " same shape").Def(Op(op, {"A", "B"}, {"C"}))
                      .Inputs({In({3, 4}, t).Range(lo, hi2), In({3, 4}, t).Range(lo, hi2)}).Ref(BitwiseBinaryRef(op)));
      c.push_back(Case(std::string(DataTypeName(t)) + " broadcast [2,1,3] x [4,1]").Def(Op(op, {"A", "B"}, {"C"}))
                      .Inputs({In({2, 1, 3}, t).Range(lo, hi2), In({4, 1}, t).Range(lo, hi2)}).Ref(BitwiseBinaryRef(op)));
    }
    c.push_back(Case(DataTypeName(t)).Def(Op("BitwiseNot", {"X"}, {"Y"})).Inputs({In({2, 5}, t).Range(lo, hi2)})
                    .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
                      RefTensor y(in[0].shape, in[0].dtype);
                      for (int64_t i = 0; i < y.numel(); ++i)
                        y[i] = BitwiseRef("BitwiseNot", in[0][i], 0, Bits(in[0].dtype), Signed(in[0].dtype));
                      return RefTensors{y};
                    }));
  }
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

// Mod from a - b * floor(a / b) (fmod 0) or a - b * trunc(a / b) (fmod 1); an integer zero divisor
// gives 0. Same shapes (broadcasting is the shared helper's, covered by the Bitwise cases).
RefFn ModRef(bool c_fmod) {
  return [c_fmod](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor y(in[0].shape, in[0].dtype);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double a = in[0][i], b = in[1][i], q = a / b;
      y[i] = b == 0 ? 0 : a - b * (c_fmod ? std::trunc(q) : std::floor(q));
    }
    return RefTensors{y};
  };
}

HN_OP_CASES(OnnxMod) {
  const std::vector<double> divisors = {3, -3, 7, -2, 5, 0, 1, -1, 4, -5, 2, 6};
  std::vector<Case> c;
  for (bool cf : {false, true})
    for (DataType t : {DataType::Int8, DataType::Int32, DataType::Int64, DataType::Int16})
      c.push_back(Case(std::string(DataTypeName(t)) + (cf ? " fmod 1" : " fmod 0"))
                      .Def(Op("OnnxMod", {"A", "B"}, {"C"}, {Arg("fmod", cf ? 1 : 0)}))
                      .Inputs({In({12}, t).Range(-100, 100), In({12}, t).Values(divisors)}).Ref(ModRef(cf)));
  c.push_back(Case("uint8").Def(Op("OnnxMod", {"A", "B"}, {"C"}))
                  .Inputs({In({6}, DataType::UInt8).Range(0, 255), In({6}, DataType::UInt8).Values({3, 7, 1, 0, 200, 9})})
                  .Ref(ModRef(false)));
  for (bool cf : {false, true})
    for (DataType t : {DataType::Float, f64})
      c.push_back(Case(std::string(DataTypeName(t)) + (cf ? " fmod 1" : " fmod 0"))
                      .Def(Op("OnnxMod", {"A", "B"}, {"C"}, {Arg("fmod", cf ? 1 : 0)}))
                      .Inputs({In({3, 4}, t).Range(-20, 20), In({3, 4}, t).Values({3, -3, 0.75, -2.5, 5, 1.5, 1, -1, 4, -5, 2, 6})})
                      .Ref(ModRef(cf)));
  // numpy's mod at the edges: signed zeros take the divisor's sign, x mod +-inf, NaN cases.
  c.push_back(Case("fmod 0 edges").Def(Op("OnnxMod", {"A", "B"}, {"C"}))
                  .Inputs({In({8}).Values({0, -0.0, -3, 3, kInf, 1, kNaN, 1}), In({8}).Values({-2, 2, kInf, -kInf, 2, 0, 2, kNaN})})
                  .Check([](const caffe2::OperatorDef&, const RefTensors&, const RefTensors& out) -> std::string {
                    const RefTensor& y = out[0];
                    const bool ok = y[0] == 0 && std::signbit(y[0]) && y[1] == 0 && !std::signbit(y[1]) && y[2] == kInf &&
                                    y[3] == -kInf && std::isnan(y[4]) && std::isnan(y[5]) && std::isnan(y[6]) &&
                                    std::isnan(y[7]);
                    return ok ? "" : "numpy's edge answers differ";
                  })
                  .NoShapeCheck());
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

// Pow: integer powers by repeated multiplication wrapped to the width (values stay below 2^53 here),
// others by std::pow, truncated for integer outputs.
RefTensors PowRef(const caffe2::OperatorDef&, const RefTensors& in) {
  RefTensor y(in[0].shape, in[0].dtype);
  const bool int_out = in[0].dtype != DataType::Float && in[0].dtype != f64;
  const bool ints = int_out && in[1].dtype != DataType::Float && in[1].dtype != f64;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double x = in[0][i], e = in[1][i];
    if (ints) {
      double p = 1;
      for (int k = 0; k < e; ++k) p *= x;
      const double mod = std::ldexp(1.0, Bits(in[0].dtype));
      p = std::fmod(p, mod);
      if (p < 0) p += mod;
      y[i] = Signed(in[0].dtype) && p >= mod / 2 ? p - mod : p;
    } else {
      y[i] = int_out ? std::trunc(std::pow(x, e)) : std::pow(x, e);
    }
  }
  return {y};
}

HN_OP_CASES(OnnxPow) {
  std::vector<Case> c = {
      Case("int32 ^ int32").Def(Op("OnnxPow", {"X", "E"}, {"Y"}))
          .Inputs({In({10}, DataType::Int32).Range(-9, 9), In({10}, DataType::Int32).Range(0, 6)}).Ref(PowRef),
      Case("int8 wraps").Def(Op("OnnxPow", {"X", "E"}, {"Y"}))
          .Inputs({In({6}, DataType::Int8).Values({3, -3, 2, 7, -1, 0}), In({6}, DataType::Int8).Values({5, 5, 7, 3, 3, 0})})
          .Ref(PowRef),
      Case("int64 ^ float").Def(Op("OnnxPow", {"X", "E"}, {"Y"}))
          .Inputs({In({6}, DataType::Int64).Range(1, 20), In({6}).Values({0.5, 1.5, 2, -1, 3, 0.25})}).Ref(PowRef),
      Case("double ^ int64, broadcast").Def(Op("OnnxPow", {"X", "E"}, {"Y"}))
          .Inputs({In({2, 3}, f64).Range(0.5, 2), In({3}, DataType::Int64).Values({-2, 0, 3})})
          .Ref([](const caffe2::OperatorDef& d, const RefTensors& in) {
            RefTensors b = in;
            b[1] = RefTensor({2, 3}, {in[1][0], in[1][1], in[1][2], in[1][0], in[1][1], in[1][2]}, DataType::Int64);
            return PowRef(d, b);
          }),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

namespace {
Tensor Filled(std::vector<int64_t> shape, DataType t) {
  Tensor x(shape, t);
  x.raw_mutable_data(t);
  return x;
}
}  // namespace

TEST_CASE("ONNX elementwise ops refuse wrong dtypes and shapes, naming op and blob", "[onnx_elementwise]") {
  CHECK_THAT(optest::RunError(Op("Sin", {"ints"}, {"Y"}), {Filled({3}, DataType::Int32)}),
             Catch::Contains("Sin") && Catch::Contains("'ints'") && Catch::Contains("int32"));
  CHECK_THAT(optest::RunError(Op("IsInf", {"labels"}, {"Y"}), {Filled({3}, DataType::Int64)}),
             Catch::Contains("IsInf") && Catch::Contains("'labels'"));
  CHECK_THAT(optest::RunError(Op("BitwiseAnd", {"a", "b"}, {"c"}), {Filled({3}, DataType::Float), Filled({3}, DataType::Float)}),
             Catch::Contains("BitwiseAnd") && Catch::Contains("'a'") && Catch::Contains("float32"));
  CHECK_THAT(optest::RunError(Op("BitwiseOr", {"a", "b"}, {"c"}), {Filled({3}, DataType::Int32), Filled({3}, DataType::Int64)}),
             Catch::Contains("'a'") && Catch::Contains("'b'") && Catch::Contains("one dtype"));
  CHECK_THAT(optest::RunError(Op("BitwiseXor", {"a", "b"}, {"c"}), {Filled({3}, DataType::Int32), Filled({4}, DataType::Int32)}),
             Catch::Contains("BitwiseXor") && Catch::Contains("broadcast"));
  CHECK_THAT(optest::RunError(Op("BitwiseNot", {"flags"}, {"c"}), {Filled({2}, DataType::Bool)}),
             Catch::Contains("BitwiseNot") && Catch::Contains("'flags'") && Catch::Contains("bool"));
  CHECK_THAT(optest::RunError(Op("OnnxMod", {"a", "b"}, {"c"}), {Filled({3}, DataType::Int32), Filled({3}, DataType::Int64)}),
             Catch::Contains("OnnxMod") && Catch::Contains("'b'") && Catch::Contains("one dtype"));
  CHECK_THAT(optest::RunError(Op("OnnxMod", {"a", "b"}, {"c"}), {Filled({3}, DataType::Bool), Filled({3}, DataType::Bool)}),
             Catch::Contains("OnnxMod") && Catch::Contains("'a'") && Catch::Contains("bool"));
}

}  // namespace harness
}  // namespace hetnet
