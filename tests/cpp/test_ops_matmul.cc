// FCTransposed, MatMul, BatchMatMul: float64 references over every transpose combination, flattening axes,
// broadcast rules, zero sizes, errors, shape inference, gradients; [gpu] CPU-vs-GPU.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-4) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
// C[M, N] = op(A) op(B), A stored M x K (K x M if ta), B stored K x N (N x K if tb).
std::vector<double> RefGemm(const float* a, const float* b, int64_t M, int64_t N, int64_t K, bool ta, bool tb) {
  std::vector<double> c(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        c[i * N + j] += static_cast<double>(ta ? a[k * M + i] : a[i * K + k]) * (tb ? b[j * K + k] : b[k * N + j]);
  return c;
}
}  // namespace

TEST_CASE("FCTransposed: Y = X W + b with W K x N", "[ops][fc_transposed]") {
  for (auto [M, K, N] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {7, 13, 5}, {0, 4, 3}, {3, 0, 2}}) {
    Workspace ws;
    auto x = RandomVec(M * K, 1), w = RandomVec(K * N, 2), b = RandomVec(N, 3);
    Feed<float>(ws, "X", {M, K}, x);
    Feed<float>(ws, "W", {K, N}, w);
    Feed<float>(ws, "b", {N}, b);
    auto def = MakeOp("FCTransposed", {"X", "W", "b"}, {"Y"});
    RunOp(ws, def);
    auto want = RefGemm(x.data(), w.data(), M, N, K, false, false);
    for (int64_t i = 0; i < M * N; ++i) want[i] += b[i % N];
    CheckClose(FetchVec<float>(ws, "Y"), want);
    CheckShapeInference(ws, def);
  }
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 4}, RandomVec(24, 1));
  Feed<float>(ws, "W", {12, 5}, RandomVec(60, 2));
  Feed<float>(ws, "b", {5}, RandomVec(5, 3));
  auto def = MakeOp("FCTransposed", {"X", "W", "b"}, {"Y"});
  RunOp(ws, def);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 5});
  CheckGradient(ws, def, {0, 1, 2});
  Feed<float>(ws, "Wbad", {5, 12}, RandomVec(60, 2));
  RequireThrowsWith(ws, MakeOp("FCTransposed", {"X", "Wbad", "b"}, {"Y"}), {"'Wbad'", "[5, 12]", "K x N"});
}

TEST_CASE("MatMul: every transpose combination, axes, like-shaped third input", "[ops][matmul]") {
  const int64_t M = 5, K = 7, N = 3;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Workspace ws;
      auto a = RandomVec(M * K, 1 + ta), b = RandomVec(K * N, 3 + tb);
      Feed<float>(ws, "A", ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, a);
      Feed<float>(ws, "B", tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, b);
      auto def = MakeOp("MatMul", {"A", "B"}, {"Y"}, {ArgI("trans_a", ta), ArgI("trans_b", tb)});
      RunOp(ws, def);
      INFO("trans_a " << ta << " trans_b " << tb);
      CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{M, N});
      CheckClose(FetchVec<float>(ws, "Y"), RefGemm(a.data(), b.data(), M, N, K, ta, tb));
      CheckShapeInference(ws, def);
      CheckGradient(ws, def, {0, 1});
    }
  SECTION("axis_a / axis_b flatten; gradients keep the operand shapes") {
    Workspace ws;
    auto a = RandomVec(2 * 3 * 4, 1), b = RandomVec(6 * 2 * 2, 2);
    Feed<float>(ws, "A", {2, 3, 4}, a);  // axis_a 2: [6, 4], transposed [4, 6]
    Feed<float>(ws, "B", {6, 2, 2}, b);  // axis_b 1: [6, 4]
    auto def = MakeOp("MatMul", {"A", "B"}, {"Y"}, {ArgI("axis_a", 2), ArgI("axis_b", 1), ArgI("trans_a", 1)});
    RunOp(ws, def);
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{4, 4});
    CheckClose(FetchVec<float>(ws, "Y"), RefGemm(a.data(), b.data(), 4, 4, 6, true, false));
    CheckShapeInference(ws, def);
    CheckGradient(ws, def, {0, 1});
    Feed<float>(ws, "Like", {2, 8}, std::vector<float>(16, 0.f));
    auto def3 = MakeOp("MatMul", {"A", "B", "Like"}, {"Y3"}, {ArgI("axis_a", 2), ArgI("trans_a", 1)});
    RunOp(ws, def3);
    CHECK(Fetch(ws, "Y3").shape() == std::vector<int64_t>{2, 8});
    CheckShapeInference(ws, def3);
  }
  SECTION("zero sizes and errors") {
    Workspace ws;
    Feed<float>(ws, "A", {0, 4}, {});
    Feed<float>(ws, "B", {4, 3}, RandomVec(12, 1));
    RunOp(ws, MakeOp("MatMul", {"A", "B"}, {"Y"}));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{0, 3});
    Feed<float>(ws, "A0", {2, 0}, {});
    Feed<float>(ws, "B0", {0, 3}, {});
    RunOp(ws, MakeOp("MatMul", {"A0", "B0"}, {"Y"}));
    CHECK(FetchVec<float>(ws, "Y") == std::vector<float>(6, 0.f));
    Feed<float>(ws, "Bbad", {5, 3}, RandomVec(15, 1));
    RequireThrowsWith(ws, MakeOp("MatMul", {"B", "Bbad"}, {"Y"}), {"'Bbad'", "[5, 3]", "dimension mismatch"});
    Feed<float>(ws, "V", {4}, RandomVec(4, 1));
    RequireThrowsWith(ws, MakeOp("MatMul", {"V", "B"}, {"Y"}), {"axis 1", "'V'"});
  }
}

namespace {
// Reference batched product: A [Ba..., M, K] (or [.., K, M]), B likewise, batch index t maps to
// t % batches of each operand.
std::vector<double> RefBatch(const std::vector<float>& a, const std::vector<float>& b, int64_t batches,
                             int64_t a_batches, int64_t b_batches, int64_t M, int64_t N, int64_t K, bool ta, bool tb) {
  std::vector<double> y;
  for (int64_t t = 0; t < batches; ++t) {
    auto c = RefGemm(a.data() + (t % a_batches) * M * K, b.data() + (t % b_batches) * K * N, M, N, K, ta, tb);
    y.insert(y.end(), c.begin(), c.end());
  }
  return y;
}
}  // namespace

TEST_CASE("BatchMatMul without broadcast: every transpose combination, gradients", "[ops][batch_matmul]") {
  const int64_t Bt = 3, M = 4, K = 5, N = 2;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Workspace ws;
      auto a = RandomVec(Bt * M * K, 1), b = RandomVec(Bt * K * N, 2);
      Feed<float>(ws, "A", ta ? std::vector<int64_t>{Bt, K, M} : std::vector<int64_t>{Bt, M, K}, a);
      Feed<float>(ws, "B", tb ? std::vector<int64_t>{Bt, N, K} : std::vector<int64_t>{Bt, K, N}, b);
      auto def = MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, {ArgI("trans_a", ta), ArgI("trans_b", tb)});
      RunOp(ws, def);
      INFO("trans_a " << ta << " trans_b " << tb);
      CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{Bt, M, N});
      CheckClose(FetchVec<float>(ws, "Y"), RefBatch(a, b, Bt, Bt, Bt, M, N, K, ta, tb));
      CheckShapeInference(ws, def);
      CheckGradient(ws, def, {0, 1});
    }
  Workspace ws;
  Feed<float>(ws, "A", {2, 3, 4, 5}, RandomVec(120, 1));
  Feed<float>(ws, "B", {2, 3, 5, 6}, RandomVec(180, 2));
  RunOp(ws, MakeOp("BatchMatMul", {"A", "B"}, {"Y"}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 3, 4, 6});
  Feed<float>(ws, "B2", {3, 2, 5, 6}, RandomVec(180, 2));
  RequireThrowsWith(ws, MakeOp("BatchMatMul", {"A", "B2"}, {"Y"}), {"'B2'", "batch dims differ"});
  Feed<float>(ws, "B3", {5, 6}, RandomVec(30, 2));
  RequireThrowsWith(ws, MakeOp("BatchMatMul", {"A", "B3"}, {"Y"}), {"'B3'", "broadcast=1"});
  Feed<float>(ws, "B4", {2, 3, 4, 6}, RandomVec(144, 2));
  RequireThrowsWith(ws, MakeOp("BatchMatMul", {"A", "B4"}, {"Y"}), {"'B4'", "inner dims differ"});
}

TEST_CASE("BatchMatMul with broadcast", "[ops][batch_matmul]") {
  const std::vector<caffe2::Argument> bc{ArgI("broadcast", 1)};
  SECTION("shorter B repeats over A's leading batch dims") {
    Workspace ws;
    auto a = RandomVec(2 * 3 * 4 * 5, 1), b = RandomVec(3 * 5 * 6, 2);
    Feed<float>(ws, "A", {2, 3, 4, 5}, a);
    Feed<float>(ws, "B", {3, 5, 6}, b);
    auto def = MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, bc);
    RunOp(ws, def);
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 3, 4, 6});
    CheckClose(FetchVec<float>(ws, "Y"), RefBatch(a, b, 6, 6, 3, 4, 6, 5, false, false));
    CheckShapeInference(ws, def);
  }
  SECTION("shorter A, 2-D") {
    Workspace ws;
    auto a = RandomVec(4 * 5, 1), b = RandomVec(2 * 6 * 5, 2);
    Feed<float>(ws, "A", {4, 5}, a);
    Feed<float>(ws, "B", {2, 6, 5}, b);
    RunOp(ws, MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, {ArgI("broadcast", 1), ArgI("trans_b", 1)}));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 4, 6});
    CheckClose(FetchVec<float>(ws, "Y"), RefBatch(a, b, 2, 1, 2, 4, 6, 5, false, true));
  }
  SECTION("vectors") {
    Workspace ws;
    auto v = RandomVec(5, 1), b = RandomVec(2 * 5 * 6, 2), a = RandomVec(2 * 3 * 5, 3);
    Feed<float>(ws, "v", {5}, v);
    Feed<float>(ws, "B", {2, 5, 6}, b);
    Feed<float>(ws, "A", {2, 3, 5}, a);
    RunOp(ws, MakeOp("BatchMatMul", {"v", "B"}, {"Y"}, bc));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 6});
    CheckClose(FetchVec<float>(ws, "Y"), RefBatch(v, b, 2, 1, 2, 1, 6, 5, false, false));
    RunOp(ws, MakeOp("BatchMatMul", {"A", "v"}, {"Y"}, bc));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 3});
    CheckClose(FetchVec<float>(ws, "Y"), RefBatch(a, v, 2, 2, 1, 3, 1, 5, false, false));
    RunOp(ws, MakeOp("BatchMatMul", {"v", "v"}, {"Y"}, bc));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{1});
    double dot = 0;
    for (float x : v) dot += static_cast<double>(x) * x;
    CheckClose(FetchVec<float>(ws, "Y"), {dot});
  }
  SECTION("mismatched trailing batch dims; gradient refused") {
    Workspace ws;
    Feed<float>(ws, "A", {2, 3, 4, 5}, RandomVec(120, 1));
    Feed<float>(ws, "B", {2, 5, 6}, RandomVec(60, 2));
    RequireThrowsWith(ws, MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, bc), {"'B'", "batch dims differ"});
    auto def = MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, bc);
    auto m = (*GradientRegistry::Find("BatchMatMul"))(def, {"Y_grad"});
    CHECK_THROWS_WITH(m->GetGradientDefs(), Catch::Matchers::Contains("broadcast=1"));
  }
}

TEST_CASE("MatMul family: GPU equals CPU", "[gpu][matmul][batch_matmul][fc_transposed]") {
  if (SkipWithoutGpu()) return;
  Tensor a = HostTensor<float>({33, 17}, RandomVec(33 * 17, 1));
  Tensor b = HostTensor<float>({17, 9}, RandomVec(17 * 9, 2));
  Tensor bt = HostTensor<float>({9, 17}, RandomVec(17 * 9, 3));
  Tensor bias = HostTensor<float>({9}, RandomVec(9, 4));
  CompareCpuGpu(MakeOp("MatMul", {"A", "B"}, {"Y"}), {{"A", a}, {"B", b}}, 1e-3);
  CompareCpuGpu(MakeOp("MatMul", {"A", "B"}, {"Y"}, {ArgI("trans_b", 1)}), {{"A", a}, {"B", bt}}, 1e-3);
  CompareCpuGpu(MakeOp("FCTransposed", {"A", "B", "b"}, {"Y"}), {{"A", a}, {"B", b}, {"b", bias}}, 1e-3);
  Tensor dy = HostTensor<float>({33, 9}, RandomVec(33 * 9, 5));
  CompareCpuGpu(MakeOp("FCTransposedGradient", {"A", "B", "dY"}, {"dW", "db", "dX"}), {{"A", a}, {"B", b}, {"dY", dy}},
                1e-3);
  Tensor ba = HostTensor<float>({2, 3, 4, 5}, RandomVec(120, 6));
  Tensor bb = HostTensor<float>({3, 5, 6}, RandomVec(90, 7));
  CompareCpuGpu(MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, {ArgI("broadcast", 1)}), {{"A", ba}, {"B", bb}}, 1e-3);
  Tensor bb4 = HostTensor<float>({2, 3, 6, 5}, RandomVec(180, 8));
  CompareCpuGpu(MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, {ArgI("trans_b", 1)}), {{"A", ba}, {"B", bb4}}, 1e-3);
  Workspace ws;
  Feed(ws, "A", HostTensor<float>({3, 4, 5}, RandomVec(60, 9)), Device::CUDA(0));
  Feed(ws, "B", HostTensor<float>({3, 5, 2}, RandomVec(30, 10)), Device::CUDA(0));
  CheckGradient(ws, MakeOp("BatchMatMul", {"A", "B"}, {"Y"}, {}, Device::CUDA(0)), {0, 1});
}
