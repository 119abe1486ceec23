// Harness cases for QLinearMatMul (operators/qlinear_matmul_op.*): the reference follows ONNX's
// formula per output element, with the batch dims of a and b matched by numpy's right-aligned
// broadcast: round_half_even(sum_k (a - a_zp)(b - b_zp) * float32(float32(a_scale * b_scale) /
// y_scale) + y_zp), saturated. The [qlinear_matmul] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

RefTensors QLinearMatMulRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const RefTensor &A = in[0], &B = in[3];
  const float mult = static_cast<float>(static_cast<float>(in[1][0] * in[4][0]) / in[6][0]);
  const int ra = static_cast<int>(A.shape.size()), rb = static_cast<int>(B.shape.size());
  const int rank = std::max(ra, rb);
  std::vector<int64_t> shape(rank);
  for (int d = 0; d < rank - 2; ++d) {
    const int64_t da = d - (rank - ra) >= 0 ? A.shape[d - (rank - ra)] : 1, db = d - (rank - rb) >= 0 ? B.shape[d - (rank - rb)] : 1;
    shape[d] = std::max(da, db);
  }
  const int64_t M = A.dim(-2), K = A.dim(-1), N = B.dim(-1);
  shape[rank - 2] = M, shape[rank - 1] = N;
  const DataType yt = in[7].dtype;
  RefTensor Y(shape, yt);
  const double lo = yt == DataType::Int8 ? -128 : 0, hi = yt == DataType::Int8 ? 127 : 255;
  for (int64_t e = 0; e < Y.numel(); ++e) {
    // Batch coordinates of e, then the flat batch index into a and b.
    int64_t rem = e / (M * N), ia = 0, ib = 0, sa = 1, sb = 1;
    for (int d = rank - 3; d >= 0; --d) {
      const int64_t i = rem % shape[d];
      rem /= shape[d];
      if (d - (rank - ra) >= 0) { const int64_t n = A.shape[d - (rank - ra)]; ia += (n == 1 ? 0 : i) * sa; sa *= n; }
      if (d - (rank - rb) >= 0) { const int64_t n = B.shape[d - (rank - rb)]; ib += (n == 1 ? 0 : i) * sb; sb *= n; }
    }
    const int64_t m = (e / N) % M, n = e % N;
    double acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += (A[(ia * M + m) * K + k] - in[2][0]) * (B[(ib * K + k) * N + n] - in[5][0]);
    Y[e] = std::min(hi, std::max(lo, std::nearbyint(acc * mult + in[7][0])));
  }
  return {Y};
}

caffe2::OperatorDef QMM() {
  return Op("QLinearMatMul", {"A", "As", "Azp", "B", "Bs", "Bzp", "Ys", "Yzp"}, {"Y"});
}

}  // namespace

HN_OP_CASES(QLinearMatMul) {
  const auto s = [](double v) { return In({1}).Values({v}); };
  const auto q = [](std::vector<int64_t> shape, DataType t) { return In(shape, t).Range(t == DataType::Int8 ? -128 : 0, t == DataType::Int8 ? 127 : 255); };
  std::vector<Case> c = {
      Case("uint8 2-D").Def(QMM()).Inputs({q({3, 5}, DataType::UInt8), s(0.02), In({1}, DataType::UInt8).Values({113}),
                                          q({5, 4}, DataType::UInt8), s(0.011), In({1}, DataType::UInt8).Values({98}),
                                          s(0.05), In({1}, DataType::UInt8).Values({120})})
          .Ref(QLinearMatMulRef),
      Case("int8, batch broadcast [2, 1] x [3], int8 output").Def(QMM())
          .Inputs({q({2, 1, 2, 6}, DataType::Int8), s(0.01), In({1}, DataType::Int8).Values({-3}), q({3, 6, 2}, DataType::Int8),
                   s(0.013), In({1}, DataType::Int8).Values({5}), s(0.4), In({1}, DataType::Int8).Values({-7})})
          .Ref(QLinearMatMulRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

TEST_CASE("QLinearMatMul refuses bad dtypes, shapes and per-axis scales, naming op and blob", "[qlinear_matmul]") {
  using optest::RunError;
  auto zeros = [](std::vector<int64_t> sh, DataType t) {
    Tensor x(sh, t);
    std::memset(x.raw_mutable_data(t), 0, x.nbytes());
    return x;
  };
  const auto u8 = DataType::UInt8, f = DataType::Float;
  const auto one = zeros({1}, f), zp = zeros({1}, u8);
  CHECK_THAT(RunError(QMM(), {zeros({2, 3}, u8), one, zp, zeros({4, 2}, u8), one, zp, one, zp}),
             Catch::Contains("QLinearMatMul") && Catch::Contains("inner dims"));
  CHECK_THAT(RunError(QMM(), {zeros({2, 3}, f), one, zp, zeros({3, 2}, u8), one, zp, one, zp}), Catch::Contains("'A'"));
  CHECK_THAT(RunError(QMM(), {zeros({3}, u8), one, zp, zeros({3, 2}, u8), one, zp, one, zp}), Catch::Contains("rank >= 2"));
  CHECK_THAT(RunError(QMM(), {zeros({2, 3}, u8), zeros({2}, f), zp, zeros({3, 2}, u8), one, zp, one, zp}),
             Catch::Contains("'As'") && Catch::Contains("per-tensor"));
  CHECK_THAT(RunError(QMM(), {zeros({2, 3}, u8), one, zp, zeros({3, 2}, u8), one, zp, zeros({1}, DataType::Double), zp}),
             Catch::Contains("one dtype"));
  CHECK_THAT(RunError(QMM(), {zeros({2, 2, 3}, u8), one, zp, zeros({3, 3, 2}, u8), one, zp, one, zp}),
             Catch::Contains("do not broadcast"));
}

}  // namespace harness
}  // namespace hetnet
