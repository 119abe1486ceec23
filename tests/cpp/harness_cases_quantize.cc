// Harness cases for QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (operators/quantize_ops.*).
// References from the ONNX formulas with the scale picked by explicit coordinates: per tensor, per
// axis, blocked; rounding half to even written out (floor, then the tie rule), not nearbyint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

const DataType u8 = DataType::UInt8, i8 = DataType::Int8, i16 = DataType::Int16, f32 = DataType::Float;

double HalfEven(double x) {
  const double f = std::floor(x), d = x - f;
  return d < 0.5 ? f : d > 0.5 ? f + 1 : (std::fmod(f, 2.0) == 0 ? f : f + 1);
}
int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
// Index into scale for element k of X (shape xs): per tensor, per axis, or blocked.
int64_t ScaleAt(const caffe2::OperatorDef& def, const std::vector<int64_t>& xs, const RefTensor& s, int64_t k) {
  if (s.numel() == 1) return 0;
  const int r = static_cast<int>(xs.size());
  const int axis = static_cast<int>((IntArg(def, "axis", 1) + r) % r);
  const int64_t block = IntArg(def, "block_size", 0);
  std::vector<int64_t> c(r);
  for (int d = r - 1; d >= 0; --d) c[d] = k % xs[d], k /= xs[d];
  if (block == 0) return c[axis];
  int64_t off = 0;
  for (int d = 0; d < r; ++d) off = off * s.shape[d] + (d == axis ? c[d] / block : c[d]);
  return off;
}
double Lo(DataType t) { return t == u8 ? 0 : t == i8 ? -128 : -32768; }
double Hi(DataType t) { return t == u8 ? 255 : t == i8 ? 127 : 32767; }

RefTensors QuantizeRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const DataType t = in.size() > 2 ? in[2].dtype : u8;
  RefTensor y(in[0].shape, t);
  for (int64_t k = 0; k < y.numel(); ++k) {
    const int64_t j = ScaleAt(def, in[0].shape, in[1], k);
    const double q = HalfEven(static_cast<float>(in[0][k]) / static_cast<float>(in[1][j])) + (in.size() > 2 ? in[2][j] : 0);
    y[k] = std::min(std::max(q, Lo(t)), Hi(t));
  }
  return {y};
}
RefTensors DequantizeRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  RefTensor y(in[0].shape, in[1].dtype);
  for (int64_t k = 0; k < y.numel(); ++k) {
    const int64_t j = ScaleAt(def, in[0].shape, in[1], k);
    y[k] = (in[0][k] - (in.size() > 2 ? in[2][j] : 0)) * in[1][j];
  }
  return {y};
}

}  // namespace

HN_OP_CASES(Quantize) {
  std::vector<Case> c = {
      Case("per tensor uint8").Def(Op("QuantizeLinear", {"X", "S", "Z"}, {"Y"}))
          .Inputs({In({3, 4}).Range(-3, 3), In({}).Values({0.02}), In({}, u8).Values({128})}).Ref(QuantizeRef),
      Case("no zero point (uint8), ties").Def(Op("QuantizeLinear", {"X", "S"}, {"Y"}))
          .Inputs({In({6}).Values({0.5, 1.5, 2.5, -1, 300, 3.49}), In({}).Values({1})}).Ref(QuantizeRef),
      Case("per axis int8").Def(Op("QuantizeLinear", {"X", "S", "Z"}, {"Y"}, {Arg("axis", 1)}))
          .Inputs({In({2, 3, 2}).Range(-2, 2), In({3}).Values({0.01, 0.05, 0.1}), In({3}, i8).Values({0, -10, 5})})
          .Ref(QuantizeRef),
      Case("blocked int16, axis 0").Def(Op("QuantizeLinear", {"X", "S", "Z"}, {"Y"}, {Arg("axis", 0), Arg("block_size", 2)}))
          .Inputs({In({5, 2}).Range(-100, 100), In({3, 2}).Values({0.003, 0.5, 0.01, 1, 0.2, 0.007}), In({3, 2}, i16).Range(-50, 50)})
          .Ref(QuantizeRef),
      Case("per tensor").Def(Op("DequantizeLinear", {"X", "S", "Z"}, {"Y"}))
          .Inputs({In({3, 4}, u8).Range(0, 255), In({}).Values({0.02}), In({}, u8).Values({128})}).Ref(DequantizeRef),
      Case("per axis int8, double scale").Def(Op("DequantizeLinear", {"X", "S", "Z"}, {"Y"}, {Arg("axis", -1)}))
          .Inputs({In({2, 3}, i8).Range(-128, 127), In({3}, DataType::Double).Values({0.5, 0.25, 2}), In({3}, i8).Values({1, 0, -3})})
          .Ref(DequantizeRef),
      Case("blocked int16 axis 1").Def(Op("DequantizeLinear", {"X", "S"}, {"Y"}, {Arg("axis", 1), Arg("block_size", 3)}))
          .Inputs({In({2, 4}, i16).Range(-1000, 1000), In({2, 2}).Values({0.1, 0.2, 0.3, 0.4})}).Ref(DequantizeRef),
      Case("dynamic").Def(Op("DynamicQuantizeLinear", {"X"}, {"Y", "S", "Z"})).Inputs({In({3, 5}).Range(-2, 6)})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            double lo = 0, hi = 0;
            for (double v : in[0].data) lo = std::min(lo, v), hi = std::max(hi, v);
            const float s = (static_cast<float>(hi) - static_cast<float>(lo)) / 255.f;
            const double z = std::min(255.0, std::max(0.0, HalfEven(static_cast<float>(-lo) / s)));
            RefTensor y(in[0].shape, u8);
            for (int64_t k = 0; k < y.numel(); ++k)
              y[k] = std::min(255.0, std::max(0.0, HalfEven(static_cast<float>(in[0][k]) / s) + z));
            return RefTensors{y, RefTensor({}, {s}, f32), RefTensor({}, {z}, u8)};
          }),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

namespace {
Tensor Of(std::vector<int64_t> shape, DataType t) {
  Tensor x(shape, t);
  std::memset(x.raw_mutable_data(t), 0, x.numel() * x.itemsize());
  return x;
}
}  // namespace

TEST_CASE("Quantize ops refuse bad scales and dtypes, naming op and blob", "[quantize]") {
  CHECK_THAT(optest::RunError(Op("QuantizeLinear", {"x", "s"}, {"y"}), {Of({2, 3}, DataType::Int32), Of({}, f32)}),
             Catch::Contains("QuantizeLinear") && Catch::Contains("'x'"));
  CHECK_THAT(optest::RunError(Op("QuantizeLinear", {"x", "scales"}, {"y"}), {Of({2, 3}, f32), Of({2}, f32)}),
             Catch::Contains("'scales'") && Catch::Contains("per-axis"));
  CHECK_THAT(optest::RunError(Op("QuantizeLinear", {"x", "s", "z"}, {"y"}), {Of({2, 3}, f32), Of({}, f32), Of({}, DataType::Bool)}),
             Catch::Contains("bool"));
  CHECK_THAT(optest::RunError(Op("QuantizeLinear", {"x", "s", "z"}, {"y"}), {Of({2, 3}, f32), Of({3}, f32), Of({2}, u8)}),
             Catch::Contains("'z'") && Catch::Contains("shape"));
  CHECK_THAT(optest::RunError(Op("DequantizeLinear", {"q", "s"}, {"y"}, {Arg("block_size", 2)}), {Of({2, 3}, u8), Of({2, 1}, f32)}),
             Catch::Contains("DequantizeLinear") && Catch::Contains("blocks of 2"));
  CHECK_THAT(optest::RunError(Op("DequantizeLinear", {"q", "s"}, {"y"}), {Of({2, 3}, f32), Of({}, f32)}),
             Catch::Contains("'q'") && Catch::Contains("float32"));
  CHECK_THAT(optest::RunError(Op("DequantizeLinear", {"q", "s"}, {"y"}, {Arg("axis", 5)}), {Of({2, 3}, u8), Of({3}, f32)}),
             Catch::Contains("axis 5"));
}

}  // namespace harness
}  // namespace hetnet
