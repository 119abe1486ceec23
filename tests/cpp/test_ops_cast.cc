// Cast, FloatToHalf, HalfToFloat: every numeric dtype pair against a double-based reference, float16
// rounding and clipping, `to` as int or name, errors, shape inference, gradients; [gpu] CPU-vs-GPU (bytes).
#include <catch2/catch.hpp>

#include <cstring>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
const std::vector<DataType> kTypes{DataType::Float, DataType::Double, DataType::Float16, DataType::Int8,
                                   DataType::UInt8, DataType::Int16, DataType::UInt16, DataType::Int32,
                                   DataType::Int64, DataType::Bool, DataType::UInt32, DataType::UInt64,
                                   DataType::BFloat16};

// Values every type can hold (bool: 0/1 only is tested separately).
const std::vector<double> kValues{0, 1, 2, 7, 100, 3, 0, 42, 127, 5, 11};

Tensor Make(DataType dt, const std::vector<double>& v) {
  Tensor t({static_cast<int64_t>(v.size())}, dt);
  DispatchDataType(dt, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same<T, std::string>::value) {
    } else {
      T* p = t.mutable_data<T>();
      for (size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_same<T, Half>::value) p[i] = FloatToHalf(static_cast<float>(v[i]));
        else if constexpr (std::is_same<T, BFloat16>::value) p[i] = FloatToBFloat16(static_cast<float>(v[i]));
        else p[i] = static_cast<T>(v[i]);
      }
    }
  });
  return t;
}
std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  DispatchDataType(t.dtype(), [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same<T, std::string>::value) {
    } else {
      for (int64_t i = 0; i < t.numel(); ++i) {
        if constexpr (std::is_same<T, Half>::value) out.push_back(HalfToFloat(t.data<T>()[i]));
        else if constexpr (std::is_same<T, BFloat16>::value) out.push_back(BFloat16ToFloat(t.data<T>()[i]));
        else out.push_back(static_cast<double>(t.data<T>()[i]));
      }
    }
  });
  return out;
}
}  // namespace

TEST_CASE("Cast converts between every pair of numeric dtypes", "[ops][cast]") {
  for (DataType from : kTypes)
    for (DataType to : kTypes) {
      Workspace ws;
      auto vals = kValues;
      if (from == DataType::Bool || to == DataType::Bool)
        for (auto& v : vals) v = v != 0 ? 1 : 0;
      Feed(ws, "X", Make(from, vals));
      auto def = MakeOp("Cast", {"X"}, {"Y"}, {ArgI("to", static_cast<int>(to))});
      RunOp(ws, def);
      Tensor y = Fetch(ws, "Y");
      INFO(DataTypeName(from) << " -> " << DataTypeName(to));
      REQUIRE(y.dtype() == to);
      CHECK(Values(y) == vals);
      CheckShapeInference(ws, def);
    }
}

TEST_CASE("Cast rounding, truncation, bool, float16 and names", "[ops][cast]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3}, {2.7f, -2.7f, 0.f, 0.5f, -0.f, 1e-3f});
  RunOp(ws, MakeOp("Cast", {"X"}, {"I"}, {ArgI("to", 2)}));
  CHECK(FetchVec<int32_t>(ws, "I") == std::vector<int32_t>{2, -2, 0, 0, 0, 0});
  CHECK(Fetch(ws, "I").shape() == std::vector<int64_t>{2, 3});
  RunOp(ws, MakeOp("Cast", {"X"}, {"B"}, {ArgS("to", "BOOL")}));
  CHECK(FetchVec<bool>(ws, "B") == std::vector<bool>{true, true, false, true, false, true});
  RunOp(ws, MakeOp("Cast", {"X"}, {"H"}, {ArgS("to", "float16")}));
  REQUIRE(Fetch(ws, "H").dtype() == DataType::Float16);
  auto h = Values(Fetch(ws, "H"));
  CHECK(h[0] == Approx(2.7).epsilon(1e-3));
  CHECK(h[5] == Approx(1e-3).epsilon(1e-3));
  Feed<float>(ws, "Big", {3}, {70000.f, -1e6f, 65504.f});
  RunOp(ws, MakeOp("FloatToHalf", {"Big"}, {"H"}));
  auto hb = Values(Fetch(ws, "H"));
  CHECK(std::isinf(hb[0]));
  CHECK(hb[2] == 65504.0);
  RunOp(ws, MakeOp("FloatToHalf", {"Big"}, {"H"}, {ArgI("clip", 1)}));
  CHECK(Values(Fetch(ws, "H")) == std::vector<double>{65504, -65504, 65504});
  RunOp(ws, MakeOp("HalfToFloat", {"H"}, {"F"}));
  CHECK(FetchVec<float>(ws, "F") == std::vector<float>{65504.f, -65504.f, 65504.f});
  auto f2h = MakeOp("FloatToHalf", {"X"}, {"H2"});
  RunOp(ws, f2h);
  CheckShapeInference(ws, f2h);
  auto h2f = MakeOp("HalfToFloat", {"H2"}, {"F2"});
  RunOp(ws, h2f);
  CheckShapeInference(ws, h2f);
  // Out of the destination's range: truncate into int64, then wrap (the GPU kernel does the same).
  Feed<float>(ws, "O", {4}, {-3.5f, 300.7f, std::nanf(""), 1e30f});
  RunOp(ws, MakeOp("Cast", {"O"}, {"U8"}, {ArgS("to", "UINT8")}));
  CHECK(FetchVec<uint8_t>(ws, "U8") == std::vector<uint8_t>{253, 44, 0, 0});
  Feed<float>(ws, "E", {0, 4}, {});
  RunOp(ws, MakeOp("Cast", {"E"}, {"EI"}, {ArgI("to", 10)}));
  CHECK(Fetch(ws, "EI").shape() == std::vector<int64_t>{0, 4});
  CHECK(Fetch(ws, "EI").dtype() == DataType::Int64);
}

TEST_CASE("Cast errors name the blob or argument", "[ops][cast]") {
  Workspace ws;
  Feed<float>(ws, "X", {2}, {1, 2});
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Cast", {"X"}, {"Y"})), Catch::Matchers::Contains("`to`"));
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Cast", {"X"}, {"Y"}, {ArgI("to", 4)})), Catch::Matchers::Contains("string"));
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Cast", {"X"}, {"Y"}, {ArgI("to", 11)})),
                    Catch::Matchers::Contains("not a TensorProto.DataType"));
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Cast", {"X"}, {"Y"}, {ArgS("to", "FLOATY")})),
                    Catch::Matchers::Contains("FLOATY"));
  Tensor s({1}, DataType::String);
  s.mutable_data<std::string>()[0] = "7";
  Feed(ws, "S", s);
  RequireThrowsWith(ws, MakeOp("Cast", {"S"}, {"Y"}, {ArgI("to", 1)}), {"'S'", "string"});
  Feed<int32_t>(ws, "I", {2}, {1, 2});
  RequireThrowsWith(ws, MakeOp("FloatToHalf", {"I"}, {"Y"}), {"'I'", "int32", "float32"});
  RequireThrowsWith(ws, MakeOp("HalfToFloat", {"X"}, {"Y"}), {"'X'", "float16"});
}

TEST_CASE("Cast gradient casts back (needs from_type); FloatToHalf <-> HalfToFloat", "[ops][cast]") {
  auto cast = MakeOp("Cast", {"X"}, {"Y"}, {ArgI("to", 13)});
  const auto* maker = GradientRegistry::Find("Cast");
  REQUIRE(maker);
  CHECK_THROWS_WITH((*maker)(cast, {"Y_grad"})->GetGradientDefs(), Catch::Matchers::Contains("from_type"));
  auto cast2 = MakeOp("Cast", {"X"}, {"Y"}, {ArgI("to", 13), ArgS("from_type", "FLOAT")});
  auto m = (*maker)(cast2, {"Y_grad"});
  auto g = m->GetGradientDefs();
  REQUIRE(g.size() == 1);
  CHECK(m->input_grads()[0] == "X_grad");
  Workspace ws;
  Feed<float>(ws, "X", {3}, {1.5f, -2.f, 0.25f});
  RunOp(ws, cast2);
  Feed<double>(ws, "Y_grad", {3}, {0.5, 1.25, -3.0});
  RunOp(ws, g[0]);
  CHECK(Fetch(ws, "X_grad").dtype() == DataType::Float);
  CHECK(FetchVec<float>(ws, "X_grad") == std::vector<float>{0.5f, 1.25f, -3.f});
  auto gf = (*GradientRegistry::Find("FloatToHalf"))(MakeOp("FloatToHalf", {"X"}, {"H"}), {"H_grad"})->GetGradientDefs();
  CHECK(gf[0].type() == "HalfToFloat");
  auto gh = (*GradientRegistry::Find("HalfToFloat"))(MakeOp("HalfToFloat", {"H"}, {"F"}), {"F_grad"})->GetGradientDefs();
  CHECK(gh[0].type() == "FloatToHalf");
  // Cast float -> float: the gradient casts back to float.
  CheckGradient(ws, MakeOp("Cast", {"X"}, {"Z"}, {ArgI("to", 1), ArgI("from_type", 1)}), {0});
}

TEST_CASE("Cast: GPU equals CPU for every dtype pair", "[gpu][cast]") {
  if (SkipWithoutGpu()) return;
  for (DataType from : kTypes)
    for (DataType to : kTypes) {
      std::vector<double> vals{0, 1, 2.75, -3.5, 100.25, 7, 65504, 1e-3};
      if (from != DataType::Float && from != DataType::Double && from != DataType::Float16)
        for (auto& v : vals) v = std::abs(std::trunc(v));
      if (from == DataType::Int8 || from == DataType::UInt8)
        for (auto& v : vals) v = std::fmod(v, 100);
      if (from == DataType::Bool)
        for (auto& v : vals) v = v != 0;
      Tensor x = Make(from, vals);
      Workspace cpu, gpu;
      Feed(cpu, "X", x);
      Feed(gpu, "X", x, Device::CUDA(0));
      auto def = MakeOp("Cast", {"X"}, {"Y"}, {ArgI("to", static_cast<int>(to))});
      RunOp(cpu, def);
      RunOp(gpu, OnDevice(def, Device::CUDA(0)));
      Tensor a = Fetch(cpu, "Y"), b = Fetch(gpu, "Y");
      INFO(DataTypeName(from) << " -> " << DataTypeName(to));
      REQUIRE(a.dtype() == b.dtype());
      // Out-of-range values too (-3.5 -> uint8, 65504 -> int8): both devices wrap (CastNumber).
      auto va = Values(a), vb = Values(b);
      for (size_t i = 0; i < va.size(); ++i) CHECK(va[i] == vb[i]);
    }
  Tensor big = HostTensor<float>({3}, {70000.f, -1e6f, 1.f});
  CompareCpuGpu(MakeOp("HalfToFloat", {"H"}, {"F"}), {{"H", Make(DataType::Float16, {1, 2.5, -7})}});
  Workspace cpu, gpu;
  Feed(cpu, "X", big);
  Feed(gpu, "X", big, Device::CUDA(0));
  auto def = MakeOp("FloatToHalf", {"X"}, {"H"}, {ArgI("clip", 1)});
  RunOp(cpu, def);
  RunOp(gpu, OnDevice(def, Device::CUDA(0)));
  CHECK(Values(Fetch(cpu, "H")) == Values(Fetch(gpu, "H")));
}
