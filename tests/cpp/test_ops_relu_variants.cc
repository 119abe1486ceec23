// LeakyRelu, PRelu, Clip: float64 references at odd and zero sizes, errors naming blobs, in place, shape
// inference, gradients by finite differences; [gpu] CPU-vs-GPU comparisons.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
// Random values at least 0.1 away from 0 (finite differences must not cross a kink).
std::vector<float> AwayFrom(std::vector<float> v, float kink = 0.f) {
  for (auto& x : v)
    if (std::abs(x - kink) < 0.1f) x = kink + (x < kink ? -1.f : 1.f) * (0.1f + std::abs(x - kink));
  return v;
}
std::vector<double> RefPRelu(const std::vector<float>& x, const std::vector<float>& w, int64_t C, int64_t inner) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = w.size() == 1 ? w[0] : w[(i / inner) % C];
    y[i] = x[i] > 0 ? x[i] : s * x[i];
  }
  return y;
}
}  // namespace

TEST_CASE("LeakyRelu matches the reference, default and explicit alpha", "[ops][leaky_relu]") {
  for (int64_t n : {0, 1, 7, 33}) {
    for (float alpha : {0.01f, 0.3f}) {
      Workspace ws;
      auto x = RandomVec(n * 3, 1, -2, 2);
      Feed<float>(ws, "X", {n, 3}, x);
      std::vector<caffe2::Argument> args;
      if (alpha != 0.01f) args.push_back(ArgF("alpha", alpha));
      auto def = MakeOp("LeakyRelu", {"X"}, {"Y"}, args);
      RunOp(ws, def);
      std::vector<double> want;
      for (float v : x) want.push_back(v > 0 ? v : static_cast<double>(alpha) * v);
      CheckClose(FetchVec<float>(ws, "Y"), want);
      CheckShapeInference(ws, def);
    }
  }
}

TEST_CASE("LeakyRelu in place, errors and gradient", "[ops][leaky_relu]") {
  Workspace ws;
  auto x = AwayFrom(RandomVec(2 * 3 * 5, 2));
  Feed<float>(ws, "X", {2, 3, 5}, x);
  RunOp(ws, MakeOp("LeakyRelu", {"X"}, {"X"}, {ArgF("alpha", 0.2f)}));
  std::vector<double> want;
  for (float v : x) want.push_back(v > 0 ? v : 0.2 * v);
  CheckClose(FetchVec<float>(ws, "X"), want);
  Feed<int32_t>(ws, "Xi", {2}, {1, 2});
  RequireThrowsWith(ws, MakeOp("LeakyRelu", {"Xi"}, {"Y"}), {"'Xi'", "int32"});
  Feed<float>(ws, "X", {2, 3, 5}, x);
  CheckGradient(ws, MakeOp("LeakyRelu", {"X"}, {"Y"}, {ArgF("alpha", 0.2f)}), {0});
  CheckGradient(ws, MakeOp("LeakyRelu", {"X"}, {"Y"}), {0});
}

TEST_CASE("PRelu per channel (NCHW, NHWC) and shared slope", "[ops][prelu]") {
  SECTION("NCHW") {
    Workspace ws;
    auto x = RandomVec(2 * 3 * 4 * 5, 1), w = RandomVec(3, 2);
    Feed<float>(ws, "X", {2, 3, 4, 5}, x);
    Feed<float>(ws, "W", {3}, w);
    auto def = MakeOp("PRelu", {"X", "W"}, {"Y"});
    RunOp(ws, def);
    CheckClose(FetchVec<float>(ws, "Y"), RefPRelu(x, w, 3, 20));
    CheckShapeInference(ws, def);
  }
  SECTION("NHWC") {
    Workspace ws;
    auto x = RandomVec(2 * 4 * 5 * 3, 3), w = RandomVec(3, 4);
    Feed<float>(ws, "X", {2, 4, 5, 3}, x);
    Feed<float>(ws, "W", {3}, w);
    RunOp(ws, MakeOp("PRelu", {"X", "W"}, {"Y"}, {ArgS("order", "NHWC")}));
    CheckClose(FetchVec<float>(ws, "Y"), RefPRelu(x, w, 3, 1));
  }
  SECTION("shared slope, 2-D and zero-size, in place") {
    Workspace ws;
    auto x = RandomVec(7 * 3, 5), w = std::vector<float>{0.25f};
    Feed<float>(ws, "X", {7, 3}, x);
    Feed<float>(ws, "W", {1}, w);
    RunOp(ws, MakeOp("PRelu", {"X", "W"}, {"X"}));
    CheckClose(FetchVec<float>(ws, "X"), RefPRelu(x, w, 1, 1));
    Feed<float>(ws, "Z", {0, 3}, {});
    RunOp(ws, MakeOp("PRelu", {"Z", "W"}, {"Y"}));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{0, 3});
  }
}

TEST_CASE("PRelu errors and gradient", "[ops][prelu]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 4}, AwayFrom(RandomVec(24, 1)));
  Feed<float>(ws, "Wbad", {4}, RandomVec(4, 2));
  RequireThrowsWith(ws, MakeOp("PRelu", {"X", "Wbad"}, {"Y"}), {"'Wbad'", "4 elements", "3 channels"});
  RequireThrowsWith(ws, MakeOp("PRelu", {"X", "Wbad"}, {"Y"}, {ArgS("order", "NCWH")}), {"order"});
  Feed<float>(ws, "W", {3}, {0.1f, -0.3f, 0.5f});
  CheckGradient(ws, MakeOp("PRelu", {"X", "W"}, {"Y"}), {0, 1});
  Feed<float>(ws, "Xh", {2, 4, 3}, AwayFrom(RandomVec(24, 3)));
  CheckGradient(ws, MakeOp("PRelu", {"Xh", "W"}, {"Y"}, {ArgS("order", "NHWC")}), {0, 1});
  Feed<float>(ws, "W1", {1}, {0.2f});
  CheckGradient(ws, MakeOp("PRelu", {"X", "W1"}, {"Y"}), {0, 1});
}

TEST_CASE("Clip matches the reference; in place; gradient; errors", "[ops][clip]") {
  Workspace ws;
  auto x = AwayFrom(AwayFrom(RandomVec(5 * 7, 1, -2, 2), -0.5f), 0.5f);
  Feed<float>(ws, "X", {5, 7}, x);
  auto def = MakeOp("Clip", {"X"}, {"Y"}, {ArgF("min", -0.5f), ArgF("max", 0.5f)});
  RunOp(ws, def);
  std::vector<double> want;
  for (float v : x) want.push_back(std::min(std::max<double>(v, -0.5), 0.5));
  CheckClose(FetchVec<float>(ws, "Y"), want);
  CheckShapeInference(ws, def);
  RunOp(ws, MakeOp("Clip", {"X"}, {"Y2"}));  // no bounds: identity
  CheckClose(FetchVec<float>(ws, "Y2"), std::vector<double>(x.begin(), x.end()));
  RunOp(ws, MakeOp("Clip", {"X"}, {"Y3"}, {ArgF("min", 0.f)}));  // only min
  for (float v : FetchVec<float>(ws, "Y3")) CHECK(v >= 0.f);
  CheckGradient(ws, def, {0});
  RunOp(ws, MakeOp("Clip", {"X"}, {"X"}, {ArgF("min", -0.5f), ArgF("max", 0.5f)}));
  CheckClose(FetchVec<float>(ws, "X"), want);
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Clip", {"X"}, {"Y"}, {ArgF("min", 1.f), ArgF("max", 0.f)})),
                    Catch::Matchers::Contains("greater than max"));
  Feed<double>(ws, "Xd", {1}, {1.0});
  RequireThrowsWith(ws, MakeOp("Clip", {"Xd"}, {"Y"}), {"'Xd'", "float64"});
}

TEST_CASE("LeakyRelu, PRelu, Clip: GPU equals CPU", "[gpu][leaky_relu][prelu][clip]") {
  if (SkipWithoutGpu()) return;
  Tensor x = HostTensor<float>({3, 5, 7}, RandomVec(105, 1, -2, 2));
  Tensor w = HostTensor<float>({5}, RandomVec(5, 2));
  CompareCpuGpu(MakeOp("LeakyRelu", {"X"}, {"Y"}, {ArgF("alpha", 0.1f)}), {{"X", x}});
  CompareCpuGpu(MakeOp("PRelu", {"X", "W"}, {"Y"}), {{"X", x}, {"W", w}});
  Tensor w7 = HostTensor<float>({7}, RandomVec(7, 3));
  CompareCpuGpu(MakeOp("PRelu", {"X", "W"}, {"Y"}, {ArgS("order", "NHWC")}), {{"X", x}, {"W", w7}});
  CompareCpuGpu(MakeOp("Clip", {"X"}, {"Y"}, {ArgF("min", -0.3f), ArgF("max", 0.6f)}), {{"X", x}});
  Tensor dy = HostTensor<float>({3, 5, 7}, RandomVec(105, 4));
  CompareCpuGpu(MakeOp("PReluGradient", {"X", "dY", "X", "W"}, {"dX", "dW"}), {{"X", x}, {"dY", dy}, {"W", w}}, 1e-3);
  CompareCpuGpu(MakeOp("LeakyReluGradient", {"X", "dY"}, {"dX"}), {{"X", x}, {"dY", dy}});
  CompareCpuGpu(MakeOp("ClipGradient", {"X", "dY"}, {"dX"}, {ArgF("min", -0.3f), ArgF("max", 0.6f)}),
                {{"X", x}, {"dY", dy}});
  Workspace ws;
  Feed(ws, "X", HostTensor<float>({2, 3, 4}, AwayFrom(RandomVec(24, 5))), Device::CUDA(0));
  Feed(ws, "W", HostTensor<float>({3}, {0.1f, -0.3f, 0.5f}), Device::CUDA(0));
  CheckGradient(ws, MakeOp("PRelu", {"X", "W"}, {"Y"}, {}, Device::CUDA(0)), {0, 1});
}
