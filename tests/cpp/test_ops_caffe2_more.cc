// Caffe2 operators of issue 13 (lengths reducers, ...): errors on bad input and gradients. Ordinary
// values are covered by the harness cases in harness_cases_caffe2_ops.cc.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/op_schema.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("SparseLengthsSum: bad indices and lengths are errors naming blob and position",
          "[ops][caffe2][lengths]") {
  Workspace ws;
  Feed<float>(ws, "D", {4, 2}, RandomVec(8, 1));
  Feed<int32_t>(ws, "I", {3}, {0, 3, 1});
  Feed<int32_t>(ws, "L", {2}, {2, 1});
  RunOp(ws, MakeOp("SparseLengthsSum", {"D", "I", "L"}, {"Y"}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 2});
  Feed<int64_t>(ws, "Bad", {3}, {0, 4, 1});
  RequireThrowsWith(ws, MakeOp("SparseLengthsSum", {"D", "Bad", "L"}, {"Y"}),
                    {"SparseLengthsSum", "index 4", "position 1", "'Bad'", "4 rows"});
  Feed<int32_t>(ws, "Neg", {3}, {0, 1, -1});
  RequireThrowsWith(ws, MakeOp("SparseLengthsMean", {"D", "Neg", "L"}, {"Y"}), {"index -1", "position 2", "'Neg'"});
  Feed<int32_t>(ws, "L5", {2}, {2, 3});
  RequireThrowsWith(ws, MakeOp("SparseLengthsSum", {"D", "I", "L5"}, {"Y"}), {"'L5'", "sum to 5", "3 indices"});
  Feed<int32_t>(ws, "LNeg", {2}, {4, -1});
  RequireThrowsWith(ws, MakeOp("SparseLengthsSum", {"D", "I", "LNeg"}, {"Y"}), {"length -1", "position 1", "'LNeg'"});
  Feed<int64_t>(ws, "L64", {2}, {2, 1});
  RequireThrowsWith(ws, MakeOp("SparseLengthsSum", {"D", "I", "L64"}, {"Y"}), {"'L64'", "int32"});
  Feed<float>(ws, "W2", {2}, {1.f, 2.f});
  RequireThrowsWith(ws, MakeOp("SparseLengthsWeightedSum", {"D", "W2", "I", "L"}, {"Y"}), {"'W2'", "2 weights",
                                                                                           "3 indices"});
  RequireThrowsWith(ws, MakeOp("LengthsSum", {"D", "L"}, {"Y"}), {"LengthsSum", "sum to 3", "4 rows"});
}

TEST_CASE("SparseLengthsWeightedSum: values and the dense DATA gradient", "[ops][caffe2][lengths][grad]") {
  Workspace ws;
  const auto d = RandomVec(10, 3), w = RandomVec(4, 4);
  Feed<float>(ws, "D", {5, 2}, d);
  Feed<float>(ws, "W", {4}, w);
  Feed<int64_t>(ws, "I", {4}, {1, 1, 4, 0});
  Feed<int32_t>(ws, "L", {3}, {3, 0, 1});
  RunOp(ws, MakeOp("SparseLengthsWeightedSum", {"D", "W", "I", "L"}, {"Y"}));
  const auto y = FetchVec<float>(ws, "Y");
  REQUIRE(y.size() == 6);
  for (int q = 0; q < 2; ++q) {
    CHECK(y[q] == Approx(w[0] * d[2 + q] + w[1] * d[2 + q] + w[2] * d[8 + q]).margin(1e-6));
    CHECK(y[2 + q] == 0.f);
    CHECK(y[4 + q] == Approx(w[3] * d[q]).margin(1e-6));
  }
  CheckGradient(ws, MakeOp("SparseLengthsWeightedSum", {"D", "W", "I", "L"}, {"Y"}), {0});
  CheckShapeInference(ws, MakeOp("SparseLengthsWeightedSum", {"D", "W", "I", "L"}, {"Y"}));
  // grad_on_weights=1: dW[j] = dot(dY[segment of j], D[I[j]]), checked here and by finite differences.
  const auto dy = RandomVec(6, 14);
  Feed<float>(ws, "dY", {3, 2}, dy);
  RunOp(ws, MakeOp("SparseLengthsWeightedSumDenseGradient", {"D", "W", "I", "L", "dY"}, {"dD", "dW"}));
  const auto dw = FetchVec<float>(ws, "dW");
  const int seg[4] = {0, 0, 0, 2}, row[4] = {1, 1, 4, 0};
  REQUIRE(dw.size() == 4);
  for (int j = 0; j < 4; ++j)
    CHECK(dw[j] == Approx(dy[seg[j] * 2] * d[row[j] * 2] + dy[seg[j] * 2 + 1] * d[row[j] * 2 + 1]).margin(1e-6));
  CheckGradient(ws, MakeOp("SparseLengthsWeightedSum", {"D", "W", "I", "L"}, {"Y"}, {ArgI("grad_on_weights", 1)}),
                {0, 1});
}

TEST_CASE("LengthsMeanGradient has Caffe2's (dOUT, LENGTHS) signature", "[ops][caffe2][lengths][grad]") {
  Workspace ws;
  const auto dy = RandomVec(6, 5);
  Feed<float>(ws, "dY", {3, 2}, dy);
  Feed<int32_t>(ws, "L", {3}, {1, 0, 3});
  RunOp(ws, MakeOp("LengthsMeanGradient", {"dY", "L"}, {"dD"}));
  CHECK(Fetch(ws, "dD").shape() == std::vector<int64_t>{4, 2});
  const auto dd = FetchVec<float>(ws, "dD");
  for (int q = 0; q < 2; ++q) {
    CHECK(dd[q] == Approx(dy[q]));
    for (int r = 1; r < 4; ++r) CHECK(dd[r * 2 + q] == Approx(dy[4 + q] / 3.0));
  }
}

TEST_CASE("LayerNorm: Caffe2's moments shape, affine shape errors, gradients", "[ops][caffe2][layernorm]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 4}, RandomVec(24, 6));
  Feed<float>(ws, "g", {4}, RandomVec(4, 7, 0.5f, 1.5f));
  Feed<float>(ws, "b", {4}, RandomVec(4, 8));
  const auto def = MakeOp("LayerNorm", {"X", "g", "b"}, {"Y", "mu", "sd"}, {ArgI("axis", -1),
                                                                           ArgI("elementwise_affine", 1)});
  RunOp(ws, def);
  CHECK(Fetch(ws, "mu").shape() == std::vector<int64_t>{2, 3, 1});
  CHECK(Fetch(ws, "sd").shape() == std::vector<int64_t>{2, 3, 1});
  CheckShapeInference(ws, def);
  CheckGradient(ws, def, {0, 1, 2});
  Feed<float>(ws, "g3", {3}, {1.f, 1.f, 1.f});
  RequireThrowsWith(ws, MakeOp("LayerNorm", {"X", "g3", "b"}, {"Y", "mu", "sd"}, {ArgI("axis", 2),
                                                                                 ArgI("elementwise_affine", 1)}),
                    {"LayerNorm", "'g3'", "[3]", "[4]"});
  RequireThrowsWith(ws, MakeOp("LayerNorm", {"X"}, {"Y", "mu", "sd"}, {ArgI("axis", 3)}), {"axis 3", "'X'"});
}

TEST_CASE("SquaredL2Distance: shape errors, gradient of both inputs", "[ops][caffe2][squaredl2]") {
  Workspace ws;
  const auto x = RandomVec(6, 9), y = RandomVec(6, 10);
  Feed<float>(ws, "X", {3, 2}, x);
  Feed<float>(ws, "Y", {3, 2}, y);
  const auto def = MakeOp("SquaredL2Distance", {"X", "Y"}, {"Z"});
  RunOp(ws, def);
  const auto z = FetchVec<float>(ws, "Z");
  REQUIRE(z.size() == 3);
  for (int i = 0; i < 3; ++i) {
    const double a = x[2 * i] - y[2 * i], b = x[2 * i + 1] - y[2 * i + 1];
    CHECK(z[i] == Approx(0.5 * (a * a + b * b)).margin(1e-6));
  }
  CheckGradient(ws, def, {0, 1});
  Feed<float>(ws, "Y6", {6}, y);
  RequireThrowsWith(ws, MakeOp("SquaredL2Distance", {"X", "Y6"}, {"Z"}), {"SquaredL2Distance", "'Y6'", "[6]", "[3, 2]"});
}

TEST_CASE("Tile: input forms agree with args, errors, gradient sums the copies", "[ops][caffe2][tile]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3}, RandomVec(6, 11));
  RunOp(ws, MakeOp("Tile", {"X"}, {"A"}, {ArgI("tiles", 3), ArgI("axis", 1)}));
  Feed<int32_t>(ws, "t", {1}, {3});
  Feed<int64_t>(ws, "ax", {1}, {1});
  RunOp(ws, MakeOp("Tile", {"X", "t", "ax"}, {"B"}));
  CHECK(Fetch(ws, "A").shape() == std::vector<int64_t>{2, 9});
  CHECK(FetchVec<float>(ws, "A") == FetchVec<float>(ws, "B"));
  CheckGradient(ws, MakeOp("Tile", {"X"}, {"A"}, {ArgI("tiles", 3), ArgI("axis", 1)}), {0});
  Feed<int32_t>(ws, "t0", {1}, {0});
  RequireThrowsWith(ws, MakeOp("Tile", {"X", "t0"}, {"Y"}), {"Tile", "tiles", "got 0"});
  Feed<float>(ws, "tf", {1}, {2.f});
  RequireThrowsWith(ws, MakeOp("Tile", {"X", "tf"}, {"Y"}), {"'tf'", "int32 or int64"});
  RequireThrowsWith(ws, MakeOp("Tile", {"X"}, {"Y"}, {ArgI("axis", 2)}), {"axis 2", "'X'"});
}

TEST_CASE("PadImage: errors for bad modes and pads, gradient of reflect", "[ops][caffe2][padimage]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 1, 3, 3}, RandomVec(9, 12));
  RequireThrowsWith(ws, MakeOp("PadImage", {"X"}, {"Y"}, {ArgI("pad", 1), ArgS("mode", "wrap")}),
                    {"PadImage", "mode 'wrap'"});
  RequireThrowsWith(ws, MakeOp("PadImage", {"X"}, {"Y"}, {ArgI("pad", 3), ArgS("mode", "reflect")}),
                    {"PadImage", "reflect", "smaller than the image"});
  RequireThrowsWith(ws, MakeOp("PadImage", {"X"}, {"Y"}, {ArgI("pad", 1), ArgI("stride", 2)}), {"stride"});
  // Pads near INT_MAX: a clear size error (3 + 2 * (2^31 - 1) rows), no int overflow into a negative dim.
  RequireThrowsWith(ws, MakeOp("PadImage", {"X"}, {"Y"}, {ArgI("pad", 2147483647)}), {"'Y'", "4294967297"});
  Feed<float>(ws, "X3", {3, 3}, RandomVec(9, 12));
  RequireThrowsWith(ws, MakeOp("PadImage", {"X3"}, {"Y"}, {ArgI("pad", 1)}), {"'X3'", "4-D"});
  const auto def = MakeOp("PadImage", {"X"}, {"Y"}, {ArgInts("pads", {2, 1, 1, 2}), ArgS("mode", "reflect")});
  RunOp(ws, def);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{1, 1, 6, 6});
  CheckShapeInference(ws, def);
  CheckGradient(ws, def, {0});
}

TEST_CASE("ResizeNearest: scales input equals args, errors", "[ops][caffe2][resizenearest]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 2, 2, 3}, RandomVec(12, 13));
  RunOp(ws, MakeOp("ResizeNearest", {"X"}, {"A"}, {ArgF("height_scale", 2.f), ArgF("width_scale", 3.f)}));
  Feed<float>(ws, "s", {2}, {2.f, 3.f});
  RunOp(ws, MakeOp("ResizeNearest", {"X", "s"}, {"B"}));
  CHECK(Fetch(ws, "A").shape() == std::vector<int64_t>{1, 2, 4, 9});
  CHECK(FetchVec<float>(ws, "A") == FetchVec<float>(ws, "B"));
  CheckGradient(ws, MakeOp("ResizeNearest", {"X"}, {"A"}, {ArgF("height_scale", 2.f), ArgF("width_scale", 3.f)}),
                {0});
  Feed<float>(ws, "s3", {3}, {1.f, 2.f, 3.f});
  RequireThrowsWith(ws, MakeOp("ResizeNearest", {"X", "s3"}, {"Y"}), {"'s3'", "2 float32 values"});
  RequireThrowsWith(ws, MakeOp("ResizeNearest", {"X"}, {"Y"}, {ArgF("width_scale", -1.f)}), {"positive"});
  RequireThrowsWith(ws, MakeOp("ResizeNearest", {"X"}, {"Y"}, {ArgS("order", "NHWC")}), {"NHWC"});
}

TEST_CASE("MSRAFill: std sqrt(2 / fan_out), seeded like the other fills", "[ops][caffe2][msrafill]") {
  Workspace ws;
  auto def = MakeOp("MSRAFill", {}, {"W"}, {ArgInts("shape", {64, 32, 3, 3})});
  def.mutable_device_option()->set_random_seed(7);
  RunOp(ws, def);
  const auto w = FetchVec<float>(ws, "W");
  REQUIRE(w.size() == 64 * 32 * 9);
  double mean = 0, sq = 0;
  for (float v : w) mean += v;
  mean /= w.size();
  for (float v : w) sq += (v - mean) * (v - mean);
  const double sd = std::sqrt(sq / w.size()), want = std::sqrt(2.0 / (64 * 9));  // fan_out = numel / dims[1]
  CHECK(std::abs(mean) < 0.01);
  CHECK(sd == Approx(want).epsilon(0.03));
  RunOp(ws, def);
  CHECK(FetchVec<float>(ws, "W") == w);  // same seed, same numbers
  def.mutable_device_option()->set_random_seed(8);
  RunOp(ws, def);
  CHECK(FetchVec<float>(ws, "W") != w);
  CheckShapeInference(ws, def);
}
