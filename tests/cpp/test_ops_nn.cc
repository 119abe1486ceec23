// FC, Sigmoid, Tanh, Softmax, SoftmaxWithLoss on CPU: float64 references, errors, in place, shape
// inference, gradients against finite differences.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
std::vector<double> RefFC(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                          int64_t M, int64_t K, int64_t N) {
  std::vector<double> y(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = b[j];
      for (int64_t k = 0; k < K; ++k) s += static_cast<double>(x[i * K + k]) * w[j * K + k];
      y[i * N + j] = s;
    }
  return y;
}
void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-4) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
std::vector<double> RefSoftmax(const std::vector<float>& x, int64_t N, int64_t D) {
  std::vector<double> y(N * D);
  for (int64_t i = 0; i < N; ++i) {
    double m = -1e300, s = 0;
    for (int64_t j = 0; j < D; ++j) m = std::max(m, (double)x[i * D + j]);
    for (int64_t j = 0; j < D; ++j) s += std::exp(x[i * D + j] - m);
    for (int64_t j = 0; j < D; ++j) y[i * D + j] = std::exp(x[i * D + j] - m) / s;
  }
  return y;
}
}  // namespace

TEST_CASE("FC matches a float64 reference at odd sizes and axes", "[ops][fc]") {
  for (auto [M, K, N] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {7, 13, 5}, {33, 65, 17}, {0, 4, 3}}) {
    Workspace ws;
    auto x = RandomVec(M * K, 1), w = RandomVec(N * K, 2), b = RandomVec(N, 3);
    Feed<float>(ws, "X", {M, K}, x);
    Feed<float>(ws, "W", {N, K}, w);
    Feed<float>(ws, "b", {N}, b);
    auto def = MakeOp("FC", {"X", "W", "b"}, {"Y"});
    RunOp(ws, def);
    REQUIRE(Fetch(ws, "Y").shape() == std::vector<int64_t>{M, N});
    CheckClose(FetchVec<float>(ws, "Y"), RefFC(x, w, b, M, K, N));
    CheckShapeInference(ws, def);
  }
  SECTION("X flattened at axis 2, W at axis_w 2") {
    Workspace ws;
    auto x = RandomVec(2 * 3 * 4 * 5, 4), w = RandomVec(6 * 4 * 5, 5), b = RandomVec(6, 6);
    Feed<float>(ws, "X", {2, 3, 4, 5}, x);
    Feed<float>(ws, "W", {3, 2, 4, 5}, w);
    Feed<float>(ws, "b", {6}, b);
    auto def = MakeOp("FC", {"X", "W", "b"}, {"Y"}, {ArgI("axis", 2), ArgI("axis_w", 2)});
    RunOp(ws, def);
    REQUIRE(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 3, 6});
    CheckClose(FetchVec<float>(ws, "Y"), RefFC(x, w, b, 6, 20, 6));
    CheckShapeInference(ws, def);
  }
}

TEST_CASE("FC errors name the blobs and shapes", "[ops][fc]") {
  Workspace ws;
  Feed<float>(ws, "X", {4, 100}, RandomVec(400, 1));
  Feed<float>(ws, "W", {10, 50}, RandomVec(500, 2));
  Feed<float>(ws, "b", {10}, RandomVec(10, 3));
  RequireThrowsWith(ws, MakeOp("FC", {"X", "W", "b"}, {"Y"}), {"'W'", "[10, 50]", "100 columns"});
  Feed<float>(ws, "W2", {10, 100}, RandomVec(1000, 2));
  Feed<float>(ws, "b2", {11}, RandomVec(11, 3));
  RequireThrowsWith(ws, MakeOp("FC", {"X", "W2", "b2"}, {"Y"}), {"'b2'", "[11]"});
  Feed<int32_t>(ws, "Xi", {4, 100}, std::vector<int32_t>(400, 1));
  RequireThrowsWith(ws, MakeOp("FC", {"Xi", "W2", "b"}, {"Y"}), {"'Xi'", "int32"});
  CHECK_THROWS_AS(RunOp(ws, MakeOp("FC", {"X", "W2"}, {"Y"})), Error);  // input count
}

TEST_CASE("FC gradient matches finite differences", "[ops][fc][grad]") {
  Workspace ws;
  Feed<float>(ws, "X", {3, 5}, RandomVec(15, 1));
  Feed<float>(ws, "W", {4, 5}, RandomVec(20, 2));
  Feed<float>(ws, "b", {4}, RandomVec(4, 3));
  CheckGradient(ws, MakeOp("FC", {"X", "W", "b"}, {"Y"}), {0, 1, 2});
}

TEST_CASE("Sigmoid and Tanh match std and run in place", "[ops][activation]") {
  for (const std::string type : {"Sigmoid", "Tanh"}) {
    auto f = [&](double v) { return type == "Sigmoid" ? 1.0 / (1.0 + std::exp(-v)) : std::tanh(v); };
    Workspace ws;
    auto x = RandomVec(3 * 7, 9, -5.f, 5.f);
    std::vector<double> want;
    for (float v : x) want.push_back(f(v));
    Feed<float>(ws, "X", {3, 7}, x);
    auto def = MakeOp(type, {"X"}, {"Y"});
    RunOp(ws, def);
    CheckClose(FetchVec<float>(ws, "Y"), want, 1e-5);
    CheckShapeInference(ws, def);
    RunOp(ws, MakeOp(type, {"X"}, {"X"}));  // in place
    CheckClose(FetchVec<float>(ws, "X"), want, 1e-5);
    Feed<float>(ws, "E", {0, 3}, {});
    RunOp(ws, MakeOp(type, {"E"}, {"EY"}));
    CHECK(Fetch(ws, "EY").shape() == std::vector<int64_t>{0, 3});
    Feed<int64_t>(ws, "I", {2}, {1, 2});
    RequireThrowsWith(ws, MakeOp(type, {"I"}, {"IY"}), {"'I'", "int64"});
    Workspace g;
    Feed<float>(g, "X", {2, 5}, RandomVec(10, 4, -2.f, 2.f));
    CheckGradient(g, MakeOp(type, {"X"}, {"Y"}), {0}, 0, 1e-3f);
  }
}

TEST_CASE("Softmax matches a float64 reference at any axis", "[ops][softmax]") {
  Workspace ws;
  auto x = RandomVec(2 * 3 * 5, 5, -4.f, 4.f);
  Feed<float>(ws, "X", {2, 3, 5}, x);
  auto def = MakeOp("Softmax", {"X"}, {"Y"});
  RunOp(ws, def);
  CheckClose(FetchVec<float>(ws, "Y"), RefSoftmax(x, 2, 15), 1e-5);
  CheckShapeInference(ws, def);
  RunOp(ws, MakeOp("Softmax", {"X"}, {"Y2"}, {ArgI("axis", 2)}));
  CheckClose(FetchVec<float>(ws, "Y2"), RefSoftmax(x, 6, 5), 1e-5);
  RunOp(ws, MakeOp("Softmax", {"X"}, {"X"}, {ArgI("axis", -1)}));  // in place
  CheckClose(FetchVec<float>(ws, "X"), RefSoftmax(x, 6, 5), 1e-5);
  RequireThrowsWith(ws, MakeOp("Softmax", {"X"}, {"Z"}, {ArgI("axis", 3)}), {"axis 3", "'X'"});
  Workspace g;
  Feed<float>(g, "X", {3, 4}, RandomVec(12, 6));
  CheckGradient(g, MakeOp("Softmax", {"X"}, {"Y"}), {0}, 0, 1e-3f);
}

TEST_CASE("SoftmaxWithLoss: int labels, weights, probabilities, scale", "[ops][softmax]") {
  const int64_t N = 5, D = 7;
  auto x = RandomVec(N * D, 11, -3.f, 3.f);
  std::vector<int32_t> label{0, 6, 3, 3, 1};
  auto P = RefSoftmax(x, N, D);
  SECTION("int32 labels, 1-D and N x 1") {
    for (auto lshape : {std::vector<int64_t>{N}, std::vector<int64_t>{N, 1}}) {
      Workspace ws;
      Feed<float>(ws, "X", {N, D}, x);
      Feed<int32_t>(ws, "L", lshape, label);
      auto def = MakeOp("SoftmaxWithLoss", {"X", "L"}, {"P", "loss"}, {ArgF("scale", 0.5f)});
      RunOp(ws, def);
      double want = 0;
      for (int64_t i = 0; i < N; ++i) want -= std::log(P[i * D + label[i]]);
      want = want / N * 0.5;
      CheckClose(FetchVec<float>(ws, "P"), P, 1e-5);
      CHECK(Fetch(ws, "loss").ndim() == 0);
      CheckClose(FetchVec<float>(ws, "loss"), {want}, 1e-5);
      CheckShapeInference(ws, def);
    }
  }
  SECTION("weights") {
    Workspace ws;
    std::vector<float> w{1.f, 0.f, 2.f, 0.5f, 1.5f};
    Feed<float>(ws, "X", {N, D}, x);
    Feed<int32_t>(ws, "L", {N}, label);
    Feed<float>(ws, "W", {N}, w);
    RunOp(ws, MakeOp("SoftmaxWithLoss", {"X", "L", "W"}, {"P", "loss"}));
    double s = 0, tw = 0;
    for (int64_t i = 0; i < N; ++i) { s -= w[i] * std::log(P[i * D + label[i]]); tw += w[i]; }
    CheckClose(FetchVec<float>(ws, "loss"), {s / tw}, 1e-5);
    CheckGradient(ws, MakeOp("SoftmaxWithLoss", {"X", "L", "W"}, {"P", "loss"}), {0}, 1, 1e-3f);
  }
  SECTION("label_prob") {
    Workspace ws;
    auto q = RefSoftmax(RandomVec(N * D, 12), N, D);
    std::vector<float> qf(q.begin(), q.end());
    Feed<float>(ws, "X", {N, D}, x);
    Feed<float>(ws, "Q", {N, D}, qf);
    RunOp(ws, MakeOp("SoftmaxWithLoss", {"X", "Q"}, {"P", "loss"}, {ArgI("label_prob", 1)}));
    double s = 0;
    for (int64_t k = 0; k < N * D; ++k) s -= qf[k] * std::log(P[k]);
    CheckClose(FetchVec<float>(ws, "loss"), {s / N}, 1e-5);
    CheckGradient(ws, MakeOp("SoftmaxWithLoss", {"X", "Q"}, {"P", "loss"}, {ArgI("label_prob", 1)}), {0}, 1, 1e-3f);
  }
  SECTION("gradient, int labels") {
    Workspace ws;
    Feed<float>(ws, "X", {N, D}, x);
    Feed<int32_t>(ws, "L", {N}, label);
    CheckGradient(ws, MakeOp("SoftmaxWithLoss", {"X", "L"}, {"P", "loss"}, {ArgF("scale", 2.f)}), {0}, 1, 1e-3f);
  }
  SECTION("errors") {
    Workspace ws;
    Feed<float>(ws, "X", {N, D}, x);
    Feed<float>(ws, "Lf", {N}, std::vector<float>(N, 0.f));
    RequireThrowsWith(ws, MakeOp("SoftmaxWithLoss", {"X", "Lf"}, {"P", "loss"}), {"'Lf'", "int32"});
    Feed<int32_t>(ws, "L4", {4}, {0, 1, 2, 3});
    RequireThrowsWith(ws, MakeOp("SoftmaxWithLoss", {"X", "L4"}, {"P", "loss"}), {"'L4'", "[4]", "[5, 7]"});
    Feed<int32_t>(ws, "Lbad", {N}, {0, 1, 7, 2, 3});
    RequireThrowsWith(ws, MakeOp("SoftmaxWithLoss", {"X", "Lbad"}, {"P", "loss"}), {"label 7"});
    Feed<float>(ws, "Wbad", {3}, {1, 1, 1});
    Feed<int32_t>(ws, "L", {N}, label);
    RequireThrowsWith(ws, MakeOp("SoftmaxWithLoss", {"X", "L", "Wbad"}, {"P", "loss"}), {"'Wbad'"});
  }
}
