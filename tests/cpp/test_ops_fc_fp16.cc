// FC on float16 tensors: CPU (float32 math, one rounding) against a float64 reference, dtype errors, shape
// inference; [gpu] tensor-core cublasGemmEx result against the CPU result.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
Tensor HalfTensor(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  Tensor t(shape, DataType::Float16);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<Half>()[i] = FloatToHalf(v[i]);
  return t;
}
std::vector<double> HalfValues(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(HalfToFloat(t.data<Half>()[i]));
  return out;
}
}  // namespace

TEST_CASE("FC on float16 inputs matches a float64 reference", "[ops][fc][fp16]") {
  for (auto [M, K, N] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {7, 13, 5}, {33, 64, 17}, {0, 4, 3}, {3, 0, 2}}) {
    Workspace ws;
    Tensor x = HalfTensor({M, K}, RandomVec(M * K, 1)), w = HalfTensor({N, K}, RandomVec(N * K, 2)),
           b = HalfTensor({N}, RandomVec(N, 3));
    Feed(ws, "X", x);
    Feed(ws, "W", w);
    Feed(ws, "b", b);
    auto def = MakeOp("FC", {"X", "W", "b"}, {"Y"});
    RunOp(ws, def);
    Tensor y = Fetch(ws, "Y");
    REQUIRE(y.dtype() == DataType::Float16);
    REQUIRE(y.shape() == std::vector<int64_t>{M, N});
    auto xv = HalfValues(x), wv = HalfValues(w), bv = HalfValues(b), yv = HalfValues(y);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = bv[j];
        for (int64_t k = 0; k < K; ++k) s += xv[i * K + k] * wv[j * K + k];
        INFO("M " << M << " K " << K << " N " << N << " at " << i << "," << j);
        CHECK(std::abs(yv[i * N + j] - s) <= 2e-3 * std::max(1.0, std::abs(s)));
      }
    CheckShapeInference(ws, def);
  }
}

TEST_CASE("FC float16 needs X, W and b all float16", "[ops][fc][fp16]") {
  Workspace ws;
  Feed(ws, "X", HalfTensor({2, 3}, RandomVec(6, 1)));
  Feed<float>(ws, "W", {4, 3}, RandomVec(12, 2));
  Feed(ws, "b", HalfTensor({4}, RandomVec(4, 3)));
  RequireThrowsWith(ws, MakeOp("FC", {"X", "W", "b"}, {"Y"}), {"'W'", "float32", "float16"});
  Feed<float>(ws, "Xf", {2, 3}, RandomVec(6, 1));
  Feed(ws, "Wh", HalfTensor({4, 3}, RandomVec(12, 2)));
  RequireThrowsWith(ws, MakeOp("FC", {"Xf", "Wh", "b"}, {"Y"}), {"'Wh'", "float16"});
}

TEST_CASE("FC float16 on CUDA (tensor cores) equals the CPU kernel", "[gpu][fc][fp16]") {
  if (SkipWithoutGpu()) return;
  for (auto [M, K, N] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{7, 13, 5}, {64, 256, 128}, {3, 0, 2}}) {
    Tensor x = HalfTensor({M, K}, RandomVec(M * K, 1)), w = HalfTensor({N, K}, RandomVec(N * K, 2)),
           b = HalfTensor({N}, RandomVec(N, 3));
    Workspace cpu, gpu;
    for (auto* ws : {&cpu, &gpu}) {
      const Device d = ws == &cpu ? Device::CPU() : Device::CUDA(0);
      Feed(*ws, "X", x, d);
      Feed(*ws, "W", w, d);
      Feed(*ws, "b", b, d);
      RunOp(*ws, MakeOp("FC", {"X", "W", "b"}, {"Y"}, {}, d));
    }
    auto a = HalfValues(Fetch(cpu, "Y")), g = HalfValues(Fetch(gpu, "Y"));
    REQUIRE(a.size() == g.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - g[i]) <= 4e-3 * std::max(1.0, std::abs(a[i])));
  }
}
