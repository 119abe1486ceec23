// Harness cases for the index / generator ops added for ONNX import: CumSum / CumProd (cumsum_op.*),
// Range, OneHot, EyeLike (range_onehot_ops.*), Hann/Hamming/BlackmanWindow (window_ops.*),
// GatherND, ScatterND, ScatterElements, TensorScatter (scatter_ops.*), all under operators/ (NonZero, Compress,
// ReverseSequence, Unique: harness_cases_onnx_select.cc). References are naive loops over output (or update)
// coordinates written from the ONNX definitions; the [onnx_index] TEST_CASE checks refusals:
// out-of-range and negative indices, wrong dtypes, absurd sizes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/onnx_index_ref_util.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

using namespace onnx_ref;  // NOLINT
const DataType f32 = DataType::Float, f64 = DataType::Double, i32 = DataType::Int32, i64 = DataType::Int64;

RefTensors CumSumRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const int r = static_cast<int>(X.shape.size());
  const int axis = static_cast<int>(Wrap(in[1][0], r));
  const bool excl = IntArg(def, "exclusive", 0) != 0, rev = IntArg(def, "reverse", 0) != 0,
             prod = def.type() == "CumProd";
  RefTensor Y(X.shape, X.dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    std::vector<int64_t> c = Coords(k, X.shape);
    const int64_t j = c[axis];
    Y[k] = prod ? 1 : 0;
    for (int64_t s = 0; s < X.shape[axis]; ++s) {
      const bool take = rev ? (excl ? s > j : s >= j) : (excl ? s < j : s <= j);
      c[axis] = s;
      if (take) Y[k] = prod ? Y[k] * X[Flat(c, X.shape)] : Y[k] + X[Flat(c, X.shape)];
    }
  }
  return {Y};
}

RefTensors RangeRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const double s = in[0][0], l = in[1][0], d = in[2][0];
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  RefTensor Y({n}, in[0].dtype);
  for (int64_t i = 0; i < n; ++i) Y[i] = s + i * d;
  return {Y};
}

RefTensors OneHotRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& I = in[0];
  const int64_t depth = static_cast<int64_t>(in[1][0]);
  const int r = static_cast<int>(I.shape.size());
  const int axis = static_cast<int>(Wrap(static_cast<double>(IntArg(def, "axis", -1)), r + 1));
  std::vector<int64_t> shape = I.shape;
  shape.insert(shape.begin() + axis, depth);
  RefTensor Y(shape, in[2].dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    std::vector<int64_t> c = Coords(k, shape);
    const int64_t at = c[axis];
    c.erase(c.begin() + axis);
    const double v = std::trunc(I[Flat(c, I.shape)]);
    const bool hot = v >= -depth && v < depth && Wrap(v, depth) == at;
    Y[k] = in[2][hot ? 1 : 0];
  }
  return {Y};
}

RefTensors GatherNDRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &I = in[1];
  const int64_t b = IntArg(def, "batch_dims", 0), k = I.shape.back();
  std::vector<int64_t> shape(I.shape.begin(), I.shape.end() - 1);
  shape.insert(shape.end(), X.shape.begin() + b + k, X.shape.end());
  RefTensor Y(shape, X.dtype);
  const size_t lead = I.shape.size() - 1;  // output coords [0, lead) index I's tuples
  for (int64_t e = 0; e < Y.numel(); ++e) {
    const auto c = Coords(e, shape);
    std::vector<int64_t> ic(c.begin(), c.begin() + lead), xc(c.begin(), c.begin() + b);
    ic.push_back(0);
    for (int64_t j = 0; j < k; ++j) {
      ic.back() = j;
      xc.push_back(Wrap(I[Flat(ic, I.shape)], X.shape[b + j]));
    }
    xc.insert(xc.end(), c.begin() + lead, c.end());
    Y[e] = X[Flat(xc, X.shape)];
  }
  return {Y};
}

double Combine(const std::string& r, double a, double b) {
  return r == "add" ? a + b : r == "mul" ? a * b : r == "max" ? std::max(a, b) : r == "min" ? std::min(a, b) : b;
}

RefTensors ScatterNDRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &I = in[1], &U = in[2];
  const std::string red = StrArg(def, "reduction");
  const int64_t k = I.shape.back();
  RefTensor Y = X;
  const size_t lead = I.shape.size() - 1;
  for (int64_t e = 0; e < U.numel(); ++e) {  // update elements in order (tuples in order)
    const auto c = Coords(e, U.shape);
    std::vector<int64_t> ic(c.begin(), c.begin() + lead), xc;
    ic.push_back(0);
    for (int64_t j = 0; j < k; ++j) {
      ic.back() = j;
      xc.push_back(Wrap(I[Flat(ic, I.shape)], X.shape[j]));
    }
    xc.insert(xc.end(), c.begin() + lead, c.end());
    double& y = Y[Flat(xc, X.shape)];
    y = Combine(red, y, U[e]);
  }
  return {Y};
}

RefTensors ScatterElementsRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &I = in[1], &U = in[2];
  const int axis = static_cast<int>(Wrap(static_cast<double>(IntArg(def, "axis", 0)), X.shape.size()));
  RefTensor Y = X;
  for (int64_t p = 0; p < I.numel(); ++p) {
    auto c = Coords(p, I.shape);
    c[axis] = Wrap(I[p], X.shape[axis]);
    double& y = Y[Flat(c, X.shape)];
    y = Combine(StrArg(def, "reduction"), y, U[p]);
  }
  return {Y};
}

InputSpec Scalar(double v, DataType t) { return In({}, t).Values({v}); }

// TensorScatter: for every update element, its cache coordinate (axis position shifted by the batch
// entry's write index, wrapped in circular mode).
RefTensors TensorScatterRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &U = in[1];
  const int r = static_cast<int>(X.shape.size());
  const int axis = static_cast<int>(Wrap(static_cast<double>(IntArg(def, "axis", -2)), r));
  const bool circular = StrArg(def, "mode") == "circular";
  RefTensor Y = X;
  for (int64_t e = 0; e < U.numel(); ++e) {
    auto c = Coords(e, U.shape);
    int64_t at = c[axis] + (in.size() > 2 ? static_cast<int64_t>(in[2][c[0]]) : 0);
    if (circular) at %= X.shape[axis];
    c[axis] = at;
    Y[Flat(c, X.shape)] = U[e];
  }
  return {Y};
}

}  // namespace

HN_OP_CASES(OnnxIndexGenerators) {
  std::vector<Case> c = {
      Case("axis 1").Def(Op("CumSum", {"X", "A"}, {"Y"})).Inputs({In({2, 5, 3}), Scalar(1, i64)}).Ref(CumSumRef),
      Case("axis -1 exclusive int32").Def(Op("CumSum", {"X", "A"}, {"Y"}, {Arg("exclusive", 1)}))
          .Inputs({In({3, 4}, i32).Range(-50, 50), Scalar(-1, i32)}).Ref(CumSumRef),
      Case("axis 0 reverse double").Def(Op("CumSum", {"X", "A"}, {"Y"}, {Arg("reverse", 1)}))
          .Inputs({In({4, 3}, f64), Scalar(0, i64)}).Ref(CumSumRef),
      Case("reverse exclusive int64").Def(Op("CumSum", {"X", "A"}, {"Y"}, {Arg("reverse", 1), Arg("exclusive", 1)}))
          .Inputs({In({6}, i64).Range(-1000, 1000), Scalar(0, i64)}).Ref(CumSumRef),
      Case("CumProd axis 1").Def(Op("CumProd", {"X", "A"}, {"Y"})).Inputs({In({2, 4, 3}).Range(0.5, 2), Scalar(1, i64)})
          .Ref(CumSumRef),
      Case("CumProd reverse exclusive int64").Def(Op("CumProd", {"X", "A"}, {"Y"}, {Arg("reverse", 1), Arg("exclusive", 1)}))
          .Inputs({In({3, 5}, i64).Range(-9, 9), Scalar(-1, i32)}).Ref(CumSumRef),
      Case("float").Def(Op("Range", {"S", "L", "D"}, {"Y"}))
          .Inputs({Scalar(1.5, f32), Scalar(7.25, f32), Scalar(0.5, f32)}).Ref(RangeRef),
      Case("int32 negative delta").Def(Op("Range", {"S", "L", "D"}, {"Y"}))
          .Inputs({Scalar(10, i32), Scalar(-4, i32), Scalar(-3, i32)}).Ref(RangeRef),
      Case("float16").Def(Op("Range", {"S", "L", "D"}, {"Y"}))
          .Inputs({Scalar(-2, DataType::Float16), Scalar(3, DataType::Float16), Scalar(0.75, DataType::Float16)})
          .Ref(RangeRef),
      Case("int64 empty").Def(Op("Range", {"S", "L", "D"}, {"Y"}))
          .Inputs({Scalar(5, i64), Scalar(2, i64), Scalar(1, i64)}).Ref(RangeRef),
      Case("default axis, float values").Def(Op("OneHot", {"I", "D", "V"}, {"Y"}))
          .Inputs({In({2, 3}, i64).Range(-6, 7), Scalar(5, i64), In({2}).Values({-1, 3})}).Ref(OneHotRef),
      Case("axis 1, float indices").Def(Op("OneHot", {"I", "D", "V"}, {"Y"}, {Arg("axis", 1)}))
          .Inputs({In({2, 3}).Values({0, 1.7, -1, 4, 9, -2.2}), Scalar(4, f32), In({2}, i32).Values({0, 7})})
          .Ref(OneHotRef),
      Case("axis -3 (first)").Def(Op("OneHot", {"I", "D", "V"}, {"Y"}, {Arg("axis", -3)}))
          .Inputs({In({2, 2}, i32).Range(0, 2), Scalar(3, f64), In({2}, f64).Values({2, 5})}).Ref(OneHotRef),
  };
  for (int64_t k : {0, 2, -1, -5}) {
    Case e("k " + std::to_string(k));
    e.Def(Op("EyeLike", {"X"}, {"Y"}, {Arg("k", k)})).Inputs({In({4, 3})})
        .Ref([k](const caffe2::OperatorDef&, const RefTensors& in) {
          RefTensor y(in[0].shape);
          for (int64_t r = 0; r < y.shape[0]; ++r)
            for (int64_t col = 0; col < y.shape[1]; ++col) y[r * y.shape[1] + col] = col - r == k ? 1 : 0;
          return RefTensors{y};
        });
    c.push_back(e);
  }
  // Windows: Hann as sin^2(pi n / M) (not the kernel's cosine form), Hamming and Blackman as defined.
  for (const char* w : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    for (int periodic : {1, 0}) {
      const std::string name = w;
      c.push_back(Case(std::string(periodic ? "periodic" : "symmetric") + " size 7, double")
                      .Def(Op(w, {"S"}, {"Y"}, {Arg("periodic", periodic), Arg("dtype", 13)}))
                      .Inputs({Scalar(7, i32)})
                      .Ref([name, periodic](const caffe2::OperatorDef&, const RefTensors&) {
                        const double pi = std::acos(-1.0), m = periodic ? 7 : 6;
                        RefTensor y({7}, f64);
                        for (int n = 0; n < 7; ++n) {
                          const double a = 2 * pi * n / m;
                          y[n] = name == "HannWindow" ? std::pow(std::sin(pi * n / m), 2)
                                 : name == "HammingWindow" ? 0.54347826086956519 - 0.45652173913043481 * std::cos(a)
                                                           : 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
                        }
                        return RefTensors{y};
                      }));
    }
  c.push_back(Case("dtype int64 from float").Def(Op("EyeLike", {"X"}, {"Y"}, {Arg("dtype", 10)}))
                  .Inputs({In({2, 2})})
                  .Ref([](const caffe2::OperatorDef&, const RefTensors&) {
                    return RefTensors{RefTensor({2, 2}, {1, 0, 0, 1}, i64)};
                  }));
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(OnnxScatterGather) {
  std::vector<Case> c = {
      Case("k 2 of rank 3").Def(Op("GatherND", {"X", "I"}, {"Y"}))
          .Inputs({In({3, 4, 2}), In({5, 2}, i64).Range(-3, 2)}).Ref(GatherNDRef),
      Case("k 3, int32 data").Def(Op("GatherND", {"X", "I"}, {"Y"}))
          .Inputs({In({2, 3, 2}, i32).Range(-50, 50), In({2, 2, 3}, i64).Values({0, 1, 1, 1, 2, 0, -1, 0, 1, 0, -3, -2})})
          .Ref(GatherNDRef),
      Case("batch_dims 1").Def(Op("GatherND", {"X", "I"}, {"Y"}, {Arg("batch_dims", 1)}))
          .Inputs({In({2, 3, 4}), In({2, 2, 1}, i32).Range(0, 2)}).Ref(GatherNDRef),
  };
  for (const char* red : {"none", "add", "mul", "max", "min"}) {
    c.push_back(Case(std::string("ScatterND k 1 ") + red).Def(Op("ScatterND", {"X", "I", "U"}, {"Y"}, {Arg("reduction", red)}))
                    .Inputs({In({4, 3}), In({3, 1}, i64).Range(-4, 3), In({3, 3})}).Ref(ScatterNDRef));
    c.push_back(Case(std::string("axis 1 ") + red)
                    .Def(Op("ScatterElements", {"X", "I", "U"}, {"Y"}, {Arg("axis", 1), Arg("reduction", red)}))
                    .Inputs({In({3, 4}), In({2, 3}, i64).Range(-4, 3), In({2, 3})}).Ref(ScatterElementsRef));
  }
  c.push_back(Case("ScatterND k 2 int64, in place").Def(Op("ScatterND", {"X", "I", "U"}, {"X"}))
                  .Inputs({In({3, 4, 2}, i64).Range(-9, 9), In({2, 2}, i32).Values({0, 1, 2, -1}), In({2, 2}, i64).Range(100, 200)})
                  .Ref(ScatterNDRef));
  c.push_back(Case("axis -1 add, double").Def(Op("ScatterElements", {"X", "I", "U"}, {"Y"}, {Arg("axis", -1), Arg("reduction", "add")}))
                  .Inputs({In({2, 5}, f64), In({2, 6}, i32).Range(0, 4), In({2, 6}, f64)}).Ref(ScatterElementsRef));
  c.push_back(Case("TensorScatter linear, axis -2").Def(Op("TensorScatter", {"X", "U", "W"}, {"Y"}))
                  .Inputs({In({2, 3, 6, 2}), In({2, 3, 2, 2}), In({2}, i64).Values({4, 1})}).Ref(TensorScatterRef));
  c.push_back(Case("TensorScatter circular, axis 1, int32").Def(Op("TensorScatter", {"X", "U", "W"}, {"Y"},
                                                                  {Arg("axis", 1), Arg("mode", "circular")}))
                  .Inputs({In({3, 5}, i32).Range(-9, 9), In({3, 3}, i32).Range(50, 90), In({3}, i64).Values({4, 0, 3})})
                  .Ref(TensorScatterRef));
  c.push_back(Case("TensorScatter no write indices").Def(Op("TensorScatter", {"X", "U"}, {"Y"}, {Arg("axis", 2)}))
                  .Inputs({In({2, 2, 4}), In({2, 2, 3})}).Ref(TensorScatterRef));
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

namespace {
template <typename T>
Tensor Make(std::vector<int64_t> shape, std::vector<T> v) {
  Tensor t(shape, DataTypeOf<T>::value);
  T* p = t.mutable_data<T>();
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.numel(); ++i) p[i] = v[i];
  return t;
}
}  // namespace

TEST_CASE("ONNX index ops refuse bad indices, dtypes and sizes, naming op and blob", "[onnx_index]") {
  const Tensor x = Make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  CHECK_THAT(optest::RunError(Op("CumSum", {"x", "ax"}, {"y"}), {x, Make<int64_t>({}, {2})}),
             Catch::Contains("CumSum") && Catch::Contains("'ax'") && Catch::Contains("out of range"));
  CHECK_THAT(optest::RunError(Op("CumSum", {"x", "ax"}, {"y"}), {x, Make<float>({}, {0})}),
             Catch::Contains("'ax'") && Catch::Contains("int32 or int64"));
  CHECK_THAT(optest::RunError(Op("Range", {"s", "l", "d"}, {"y"}), {Make<int64_t>({}, {0}), Make<int64_t>({}, {5}), Make<int64_t>({}, {0})}),
             Catch::Contains("Range") && Catch::Contains("delta"));
  CHECK_THAT(optest::RunError(Op("Range", {"s", "l", "d"}, {"y"}), {Make<float>({}, {0}), Make<float>({}, {1e30f}), Make<float>({}, {1e-30f})}),
             Catch::Contains("Range") && Catch::Contains("too many"));
  CHECK_THAT(optest::RunError(Op("Range", {"s", "l", "d"}, {"y"}), {Make<float>({}, {0}), Make<int64_t>({}, {5}), Make<float>({}, {1})}),
             Catch::Contains("'l'") && Catch::Contains("one dtype"));
  CHECK_THAT(optest::RunError(Op("OneHot", {"i", "depth", "v"}, {"y"}), {Make<int64_t>({2}, {0, 1}), Make<int64_t>({}, {0}), Make<float>({2}, {0, 1})}),
             Catch::Contains("OneHot") && Catch::Contains("'depth'"));
  CHECK_THAT(optest::RunError(Op("OneHot", {"i", "depth", "v"}, {"y"}), {Make<int64_t>({2}, {0, 1}), Make<int64_t>({}, {int64_t{1} << 61}), Make<float>({2}, {0, 1})}),
             !Catch::Equals(""));
  CHECK_THAT(optest::RunError(Op("EyeLike", {"x3"}, {"y"}), {Make<float>({2, 2, 2}, {})}), Catch::Contains("'x3'") && Catch::Contains("2-D"));
  CHECK_THAT(optest::RunError(Op("HannWindow", {"n"}, {"y"}), {Make<int64_t>({}, {-3})}),
             Catch::Contains("HannWindow") && Catch::Contains("'n'") && Catch::Contains(">= 0"));
  CHECK_THAT(optest::RunError(Op("BlackmanWindow", {"n"}, {"y"}), {Make<float>({}, {3})}), Catch::Contains("int32 or int64"));
  CHECK_THAT(optest::RunError(Op("HammingWindow", {"n"}, {"y"}), {Make<int64_t>({}, {int64_t{1} << 62})}), !Catch::Equals(""));
  CHECK_THAT(optest::RunError(Op("Compress", {"x", "c"}, {"y"}, {Arg("axis", 0)}), {x, Make<bool>({4}, {true, true, true, true})}),
             Catch::Contains("Compress") && Catch::Contains("'c'"));
  CHECK_THAT(optest::RunError(Op("ReverseSequence", {"x", "lens"}, {"y"}), {x, Make<int64_t>({2}, {4, 1})}),
             Catch::Contains("ReverseSequence") && Catch::Contains("'lens'") && Catch::Contains("4"));
  CHECK_THAT(optest::RunError(Op("GatherND", {"x", "idx"}, {"y"}), {x, Make<int64_t>({1, 2}, {3, 0})}),
             Catch::Contains("GatherND") && Catch::Contains("'idx'") && Catch::Contains("holds 3"));
  CHECK_THAT(optest::RunError(Op("GatherND", {"x", "idx"}, {"y"}), {x, Make<int64_t>({1, 3}, {0, 0, 0})}),
             Catch::Contains("'idx'") && Catch::Contains("last dim"));
  CHECK_THAT(optest::RunError(Op("ScatterND", {"x", "idx", "u"}, {"y"}), {x, Make<int64_t>({1, 1}, {-4}), Make<float>({1, 2}, {})}),
             Catch::Contains("ScatterND") && Catch::Contains("holds -4"));
  CHECK_THAT(optest::RunError(Op("ScatterND", {"x", "idx", "u"}, {"y"}), {x, Make<int64_t>({1, 1}, {0}), Make<float>({1, 3}, {})}),
             Catch::Contains("'u'"));
  CHECK_THAT(optest::RunError(Op("ScatterElements", {"x", "idx", "u"}, {"y"}, {Arg("reduction", "sum")}), {x, Make<int64_t>({1, 1}, {0}), Make<float>({1, 1}, {})}),
             Catch::Contains("ScatterElements") && Catch::Contains("reduction"));
  CHECK_THAT(optest::RunError(Op("ScatterElements", {"x", "idx", "u"}, {"y"}), {x, Make<int64_t>({1, 1}, {7}), Make<float>({1, 1}, {})}),
             Catch::Contains("'idx'") && Catch::Contains("holds 7"));
  CHECK_THAT(optest::RunError(Op("ScatterElements", {"x", "idx", "u"}, {"y"}), {x, Make<float>({1, 1}, {0}), Make<float>({1, 1}, {})}),
             Catch::Contains("'idx'") && Catch::Contains("int32 or int64"));
  CHECK_THAT(optest::RunError(Op("TensorScatter", {"x", "u", "w"}, {"y"}, {Arg("axis", 1)}),
                      {x, Make<float>({3, 1}, {}), Make<int64_t>({3}, {0, 1, 2})}),
             Catch::Contains("TensorScatter") && Catch::Contains("'w'") && Catch::Contains("writes past"));
  CHECK_THAT(optest::RunError(Op("TensorScatter", {"x", "u"}, {"y"}, {Arg("axis", 1)}), {x, Make<float>({3, 3}, {})}),
             Catch::Contains("'u'") && Catch::Contains("shorter or equal"));
  CHECK_THAT(optest::RunError(Op("ScatterElements", {"b", "idx", "u"}, {"y"}, {Arg("reduction", "add")}),
                      {Make<bool>({2}, {true, false}), Make<int64_t>({1}, {0}), Make<bool>({1}, {true})}),
             Catch::Contains("'b'") && Catch::Contains("bool"));
}

}  // namespace harness
}  // namespace hetnet
