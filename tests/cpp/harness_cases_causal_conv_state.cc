// Harness cases for CausalConvWithState (operators/causal_conv_with_state_op.*): the float64
// reference reads input step t - (k-1) + j from the past state when it is negative (zero without
// one), applies bias and SiLU, and takes present_state from the tail of [past, input]. The
// [causal_conv] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

RefTensors CausalConvRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  int64_t has_bias = 0, has_past = 0;
  std::string act = "none";
  for (const auto& a : def.arg()) {
    if (a.name() == "has_bias") has_bias = a.i();
    if (a.name() == "has_past") has_past = a.i();
    if (a.name() == "activation") act = a.s();
  }
  const RefTensor &X = in[0], &W = in[1];
  const int64_t B = X.dim(0), C = X.dim(1), L = X.dim(2), k = W.dim(2);
  // Step s of channel (b, c) in input time: s < 0 reads the past state (its last entry is s = -1).
  auto at = [&](int64_t b, int64_t c, int64_t s) {
    if (s >= 0) return X[(b * C + c) * L + s];
    return has_past ? in[2 + has_bias][(b * C + c) * (k - 1) + (k - 1 + s)] : 0.0;
  };
  RefTensor Y({B, C, L}, X.dtype), P({B, C, k - 1}, X.dtype);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t t = 0; t < L; ++t) {
        double v = has_bias ? in[2][c] : 0.0;
        for (int64_t j = 0; j < k; ++j) v += W[c * k + j] * at(b, c, t - (k - 1) + j);
        Y[(b * C + c) * L + t] = act == "none" ? v : v / (1 + std::exp(-v));
      }
      for (int64_t j = 0; j < k - 1; ++j) P[(b * C + c) * (k - 1) + j] = at(b, c, L - (k - 1) + j);
    }
  return {Y, P};
}

caffe2::OperatorDef CausalConv(bool bias, bool past, const std::string& act) {
  std::vector<std::string> ins{"X", "W"};
  if (bias) ins.push_back("Bias");
  if (past) ins.push_back("Past");
  return Op("CausalConvWithState", ins, {"Y", "present"},
            {Arg("has_bias", int64_t{bias}), Arg("has_past", int64_t{past}), Arg("activation", act)});
}

}  // namespace

HN_OP_CASES(CausalConvWithState) {
  std::vector<Case> c = {
      Case("k 4, no bias, no past").Def(CausalConv(false, false, "none")).Inputs({In({2, 3, 6}), In({3, 1, 4})})
          .Ref(CausalConvRef),
      Case("bias, past, silu").Def(CausalConv(true, true, "silu"))
          .Inputs({In({2, 3, 5}), In({3, 1, 3}), In({3}), In({2, 3, 2})}).Ref(CausalConvRef),
      Case("input shorter than the kernel, past, double").Def(CausalConv(false, true, "swish"))
          .Inputs({In({1, 2, 2}, DataType::Double), In({2, 1, 5}, DataType::Double), In({1, 2, 4}, DataType::Double)})
          .Ref(CausalConvRef),
      Case("k 1 (empty state)").Def(CausalConv(true, false, "none")).Inputs({In({1, 2, 3}), In({2, 1, 1}), In({2})})
          .Ref(CausalConvRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

TEST_CASE("CausalConvWithState refuses bad shapes and activations, naming op and blob", "[causal_conv]") {
  using optest::RunError;
  auto zeros = [](std::vector<int64_t> s, DataType t = DataType::Float) {
    Tensor x(s, t);
    std::memset(x.raw_mutable_data(t), 0, x.nbytes());
    return x;
  };
  const auto X = zeros({2, 3, 5}), W = zeros({3, 1, 4});
  CHECK_THAT(RunError(CausalConv(false, false, "none"), {zeros({3, 5}), W}),
             Catch::Contains("CausalConvWithState") && Catch::Contains("'X'"));
  CHECK_THAT(RunError(CausalConv(false, false, "none"), {X, zeros({3, 2, 4})}), Catch::Contains("'W'"));
  CHECK_THAT(RunError(CausalConv(true, false, "none"), {X, W, zeros({4})}), Catch::Contains("'Bias'"));
  CHECK_THAT(RunError(CausalConv(false, true, "none"), {X, W, zeros({2, 3, 2})}), Catch::Contains("'Past'"));
  CHECK_THAT(RunError(CausalConv(false, false, "gelu"), {X, W}), Catch::Contains("gelu"));
  CHECK_THAT(RunError(CausalConv(false, false, "none"), {X, zeros({3, 1, 4}, DataType::Double)}),
             Catch::Contains("one dtype"));
}

}  // namespace harness
}  // namespace hetnet
