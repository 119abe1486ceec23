// Harness cases for LinearAttention (operators/linear_attention_op.*). The float64 reference keeps
// one state matrix per (batch, kv head) as a map from (key feature, value feature) and applies the
// spec's step in its own order: decay, delta correction, outer-product update, query read per q
// head. The [linear_attention] TEST_CASE checks refusals.
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

RefTensors LinearAttentionRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  int64_t hq = 0, hkv = 0, has_past = 0, has_decay = 0, has_beta = 0;
  double scale = 0;
  for (const auto& a : def.arg()) {
    if (a.name() == "q_num_heads") hq = a.i();
    if (a.name() == "kv_num_heads") hkv = a.i();
    if (a.name() == "has_past") has_past = a.i();
    if (a.name() == "has_decay") has_decay = a.i();
    if (a.name() == "has_beta") has_beta = a.i();
    if (a.name() == "scale") scale = a.f();
  }
  const RefTensor &Q = in[0], &K = in[1], &V = in[2];
  const RefTensor* past = has_past ? &in[3] : nullptr;
  const RefTensor* decay = has_decay ? &in[3 + has_past] : nullptr;
  const RefTensor* beta = has_beta ? &in[3 + has_past + has_decay] : nullptr;
  const int64_t B = Q.dim(0), S = Q.dim(1), dk = Q.dim(2) / hq, dv = V.dim(2) / hkv;
  if (scale == 0) scale = 1 / std::sqrt(static_cast<double>(dk));
  RefTensor Y({B, S, hq * dv}, Q.dtype), P({B, hkv, dk, dv}, Q.dtype);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t g = 0; g < hkv; ++g) {
      std::vector<std::vector<double>> st(dk, std::vector<double>(dv, 0.0));
      for (int64_t d = 0; d < dk; ++d)
        for (int64_t m = 0; m < dv; ++m) st[d][m] = past ? (*past)[((b * hkv + g) * dk + d) * dv + m] : 0.0;
      for (int64_t t = 0; t < S; ++t) {
        auto key = [&](int64_t d) { return K[(b * S + t) * hkv * dk + g * dk + d]; };
        if (decay) {
          const int64_t w = decay->dim(2);
          for (int64_t d = 0; d < dk; ++d)
            for (auto& x : st[d]) x *= std::exp((*decay)[(b * S + t) * w + (w == hkv ? g : g * dk + d)]);
        }
        std::vector<double> v(dv);
        for (int64_t m = 0; m < dv; ++m) {
          v[m] = V[(b * S + t) * hkv * dv + g * dv + m];
          if (beta) {
            double read = 0;
            for (int64_t d = 0; d < dk; ++d) read += key(d) * st[d][m];
            v[m] = (*beta)[(b * S + t) * beta->dim(2) + (beta->dim(2) == 1 ? 0 : g)] * (v[m] - read);
          }
        }
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m) st[d][m] += key(d) * v[m];
        for (int64_t h = 0; h < hq; ++h) {
          if (h * hkv / hq != g) continue;
          for (int64_t m = 0; m < dv; ++m) {
            double acc = 0;
            for (int64_t d = 0; d < dk; ++d) acc += Q[(b * S + t) * hq * dk + h * dk + d] * st[d][m];
            Y[(b * S + t) * hq * dv + h * dv + m] = scale * acc;
          }
        }
      }
      for (int64_t d = 0; d < dk; ++d)
        for (int64_t m = 0; m < dv; ++m) P[((b * hkv + g) * dk + d) * dv + m] = st[d][m];
    }
  return {Y, P};
}

caffe2::OperatorDef LinAttn(const std::string& rule, bool past, int64_t hq, int64_t hkv, float scale = 0) {
  std::vector<std::string> ins{"Q", "K", "V"};
  const bool decay = rule == "gated" || rule == "gated_delta", beta = rule == "delta" || rule == "gated_delta";
  if (past) ins.push_back("P");
  if (decay) ins.push_back("D");
  if (beta) ins.push_back("Bt");
  std::vector<caffe2::Argument> args{Arg("update_rule", rule), Arg("q_num_heads", hq), Arg("kv_num_heads", hkv),
                                     Arg("has_past", int64_t{past}), Arg("has_decay", int64_t{decay}),
                                     Arg("has_beta", int64_t{beta})};
  if (scale != 0) args.push_back(Arg("scale", scale));
  return Op("LinearAttention", ins, {"Y", "present"}, args);
}

}  // namespace

HN_OP_CASES(LinearAttention) {
  std::vector<Case> c = {
      Case("linear").Def(LinAttn("linear", false, 2, 2)).Inputs({In({2, 3, 8}), In({2, 3, 8}), In({2, 3, 6})})
          .Ref(LinearAttentionRef),
      Case("gated, per-feature decay, past, scale").Def(LinAttn("gated", true, 2, 2, 0.3f))
          .Inputs({In({1, 4, 8}), In({1, 4, 8}), In({1, 4, 6}), In({1, 2, 4, 3}), In({1, 4, 8}).Range(-0.5, 0)})
          .Ref(LinearAttentionRef),
      Case("delta, beta per head").Def(LinAttn("delta", false, 2, 2))
          .Inputs({In({2, 3, 8}), In({2, 3, 8}), In({2, 3, 8}), In({2, 3, 2}).Range(0, 1)}).Ref(LinearAttentionRef),
      Case("gated_delta, grouped 4/2 heads, per-head decay, scalar beta, past").Def(LinAttn("gated_delta", true, 4, 2))
          .Inputs({In({2, 3, 16}), In({2, 3, 8}), In({2, 3, 6}), In({2, 2, 4, 3}), In({2, 3, 2}).Range(-0.5, 0),
                   In({2, 3, 1}).Range(0, 1)})
          .Ref(LinearAttentionRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

TEST_CASE("LinearAttention refuses bad shapes, rules and head counts, naming op and blob", "[linear_attention]") {
  using optest::RunError;
  auto zeros = [](std::vector<int64_t> s, DataType t = DataType::Float) {
    Tensor x(s, t);
    std::memset(x.raw_mutable_data(t), 0, x.nbytes());
    return x;
  };
  const auto x = zeros({1, 2, 8});
  CHECK_THAT(RunError(LinAttn("linear", false, 3, 2), {x, x, x}), Catch::Contains("LinearAttention") &&
                                                                      Catch::Contains("multiple of kv_num_heads"));
  CHECK_THAT(RunError(LinAttn("linear", false, 3, 3), {x, x, x}), Catch::Contains("not multiples"));
  CHECK_THAT(RunError(LinAttn("linear", false, 2, 2), {zeros({2, 8}), x, x}), Catch::Contains("'Q'"));
  CHECK_THAT(RunError(LinAttn("linear", false, 2, 2), {x, zeros({1, 3, 8}), x}), Catch::Contains("'K'"));
  CHECK_THAT(RunError(LinAttn("linear", true, 2, 2), {x, x, x, zeros({1, 2, 4, 3})}), Catch::Contains("'P'"));
  CHECK_THAT(RunError(LinAttn("gated", false, 2, 2), {x, x, x, zeros({1, 2, 3})}), Catch::Contains("'D'"));
  CHECK_THAT(RunError(LinAttn("delta", false, 2, 2), {x, x, x, zeros({1, 2, 3})}), Catch::Contains("'Bt'"));
  auto bad_rule = LinAttn("linear", false, 2, 2);
  bad_rule.mutable_arg(0)->set_s("gated");  // gated without a decay input
  CHECK_THAT(RunError(bad_rule, {x, x, x}), Catch::Contains("needs decay"));
  CHECK_THAT(RunError(LinAttn("linear", false, 2, 2), {x, x, zeros({1, 2, 8}, DataType::Double)}),
             Catch::Contains("one dtype"));
}

}  // namespace harness
}  // namespace hetnet
