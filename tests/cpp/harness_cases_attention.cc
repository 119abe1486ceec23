// Harness cases for Attention (operators/attention_op.*). The reference is a float64 loop over
// [b, h, i, j] that reads Q/K/V through their own index maps (3-D packed or 4-D, the past first), and
// builds the bias from the mask with numpy's right-aligned broadcast, the causal / window / padding
// rules, softmax with fully masked rows as zeros. RotaryEmbedding (operators/rotary_embedding_op.*):
// the reference walks each head's features and finds each one's partner. SwiGLU: a b / (1 + e^(-alpha a)).
// The [attention] TEST_CASEs check the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/bfloat16.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
double FloatArg(const caffe2::OperatorDef& def, const std::string& name, double dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.f();
  return dflt;
}

// Element [b, h, s, e] of a 4-D [B, H, S, E] tensor, or of a 3-D [B, S, H*E] one.
double At(const RefTensor& t, int64_t H, int64_t b, int64_t h, int64_t s, int64_t e) {
  if (t.shape.size() == 3) return t[(b * t.dim(1) + s) * t.dim(2) + h * (t.dim(2) / H) + e];
  return t[((b * t.dim(1) + h) * t.dim(2) + s) * t.dim(3) + e];
}

RefTensors AttentionRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &Q = in[0], &K = in[1], &V = in[2];
  const bool packed = Q.shape.size() == 3, has_mask = IntArg(def, "has_mask", 0), has_past = IntArg(def, "has_past", 0);
  const bool has_nonpad = IntArg(def, "has_nonpad", 0), causal = IntArg(def, "is_causal", 0);
  const int64_t Hq = packed ? IntArg(def, "q_num_heads", 0) : Q.dim(1), Hkv = packed ? IntArg(def, "kv_num_heads", 0) : K.dim(1);
  const int64_t B = Q.dim(0), Sq = Q.dim(packed ? 1 : 2), Skv = K.dim(packed ? 1 : 2);
  const int64_t D = packed ? Q.dim(2) / Hq : Q.dim(3), Dv = packed ? V.dim(2) / Hkv : V.dim(3);
  const int past = 3 + has_mask;
  const int64_t Sp = has_past ? in[past].dim(2) : 0, St = Sp + Skv;
  const double scale = FloatArg(def, "scale", 1.0 / std::sqrt(static_cast<double>(D)));
  const double softcap = FloatArg(def, "softcap", 0.0);
  const int64_t mode = IntArg(def, "qk_matmul_output_mode", 0), left = IntArg(def, "left_window_size", -1);
  const int64_t right = IntArg(def, "right_window_size", -1);
  const double inf = std::numeric_limits<double>::infinity();
  // Key / value element: the past first, then the new ones.
  auto kv = [&](const RefTensor& cur, int which, int64_t b, int64_t g, int64_t j, int64_t e) {
    return j < Sp ? At(in[past + which], Hkv, b, g, j, e) : At(cur, Hkv, b, g, j - Sp, e);
  };
  auto bias = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    double v = 0;
    if (has_mask) {
      const RefTensor& M = in[3];
      const int r = static_cast<int>(M.shape.size());
      const int64_t coord[4] = {b, h, i, j};
      if (j >= M.dim(-1)) return -inf;
      int64_t k = 0;
      for (int d = 0; d < r; ++d) k = k * M.shape[d] + (M.shape[d] == 1 ? 0 : coord[4 - r + d]);
      v = M.dtype == DataType::Bool ? (M[k] != 0 ? 0.0 : -inf) : M[k];
    }
    const int64_t n = has_nonpad ? static_cast<int64_t>(in.back()[b]) : St;
    const int64_t pos = i + (has_nonpad ? n - Sq : Sp);
    if (j >= n || (causal && j > pos) || (left >= 0 && j < pos - left) || (right >= 0 && j > pos + right)) return -inf;
    return v;
  };
  RefTensor Y(packed ? std::vector<int64_t>{B, Sq, Hq * Dv} : std::vector<int64_t>{B, Hq, Sq, Dv}, Q.dtype);
  RefTensor PK({B, Hkv, St, D}, Q.dtype), PV({B, Hkv, St, Dv}, Q.dtype), QK({B, Hq, Sq, St}, Q.dtype);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t g = 0; g < Hkv; ++g)
      for (int64_t j = 0; j < St; ++j) {
        for (int64_t e = 0; e < D; ++e) PK[((b * Hkv + g) * St + j) * D + e] = kv(K, 0, b, g, j, e);
        for (int64_t e = 0; e < Dv; ++e) PV[((b * Hkv + g) * St + j) * Dv + e] = kv(V, 1, b, g, j, e);
      }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        const int64_t g = h * Hkv / Hq;
        std::vector<double> x(St), w(St);
        bool any = false;
        for (int64_t j = 0; j < St; ++j) {
          double s = 0;
          for (int64_t e = 0; e < D; ++e) s += At(Q, Hq, b, h, i, e) * kv(K, 0, b, g, j, e);
          s *= scale;
          if (softcap > 0) s = softcap * std::tanh(s / softcap);
          const double m = bias(b, h, i, j);
          any = any || m != -inf;
          x[j] = s + m;
          QK[((b * Hq + h) * Sq + i) * St + j] = mode == 2 ? x[j] : s;
        }
        double mx = -inf, sum = 0;
        for (double v : x) mx = std::max(mx, v);
        for (int64_t j = 0; j < St; ++j) sum += w[j] = x[j] == -inf ? 0.0 : std::exp(x[j] - mx);
        for (int64_t j = 0; j < St; ++j) {
          w[j] = any ? w[j] / sum : 0.0;
          if (mode == 3) QK[((b * Hq + h) * Sq + i) * St + j] = w[j];
        }
        for (int64_t e = 0; e < Dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < St; ++j) acc += w[j] * kv(V, 1, b, g, j, e);
          Y[packed ? (b * Sq + i) * Hq * Dv + h * Dv + e : ((b * Hq + h) * Sq + i) * Dv + e] = acc;
        }
      }
  RefTensors out{Y, PK, PV, QK};
  out.resize(def.output_size());
  return out;
}

RefTensors RotaryRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &Cos = in[1], &Sin = in[2];
  const bool packed = X.shape.size() == 3, interleaved = IntArg(def, "interleaved", 0);
  const int64_t B = X.dim(0), H = packed ? IntArg(def, "num_heads", 0) : X.dim(1), S = X.dim(packed ? 1 : 2);
  const int64_t D = packed ? X.dim(2) / H : X.dim(3), R = IntArg(def, "rotary_embedding_dim", 0) ? IntArg(def, "rotary_embedding_dim", 0) : D;
  RefTensor Y(X.shape, X.dtype);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t row = in.size() > 3 ? static_cast<int64_t>(in[3][b * S + s]) : b * S + s;
        auto idx = [&](int64_t e) { return packed ? (b * S + s) * H * D + h * D + e : ((b * H + h) * S + s) * D + e; };
        for (int64_t e = 0; e < D; ++e) {
          if (e >= R) {
            Y[idx(e)] = X[idx(e)];
            continue;
          }
          // Feature e is the first (real) or second (imaginary) of pair k.
          const bool first = interleaved ? e % 2 == 0 : e < R / 2;
          const int64_t k = interleaved ? e / 2 : e % (R / 2);
          const int64_t partner = interleaved ? (first ? e + 1 : e - 1) : (first ? e + R / 2 : e - R / 2);
          const double c = Cos[row * (R / 2) + k], sn = Sin[row * (R / 2) + k];
          Y[idx(e)] = first ? c * X[idx(e)] - sn * X[idx(partner)] : sn * X[idx(partner)] + c * X[idx(e)];
        }
      }
  return {Y};
}

caffe2::OperatorDef Attn(std::vector<std::string> extra_in, int outputs, std::vector<caffe2::Argument> args) {
  std::vector<std::string> ins{"Q", "K", "V"};
  ins.insert(ins.end(), extra_in.begin(), extra_in.end());
  const std::vector<std::string> all{"Y", "present_key", "present_value", "qk"};
  return Op("Attention", ins, std::vector<std::string>(all.begin(), all.begin() + outputs), args);
}

}  // namespace

HN_OP_CASES(Attention) {
  std::vector<Case> c = {
      Case("4-D, V head size differs").Def(Attn({}, 1, {})).Inputs({In({2, 3, 4, 8}), In({2, 3, 6, 8}), In({2, 3, 6, 5})})
          .Ref(AttentionRef),
      Case("3-D packed, grouped-query 4/2 heads, scale").Def(Attn({}, 1, {Arg("q_num_heads", 4), Arg("kv_num_heads", 2),
                                                                           Arg("scale", 0.3f)}))
          .Inputs({In({2, 3, 24}), In({2, 5, 12}), In({2, 5, 6})}).Ref(AttentionRef),
      Case("causal, float mask [Sq, St], past, qk after mask").Def(
              Attn({"M", "PK", "PV"}, 4, {Arg("has_mask", 1), Arg("has_past", 1), Arg("is_causal", 1),
                                          Arg("qk_matmul_output_mode", 2)}))
          .Inputs({In({2, 2, 3, 4}), In({2, 2, 3, 4}), In({2, 2, 3, 4}), In({3, 5}), In({2, 2, 2, 4}), In({2, 2, 2, 4})})
          .Ref(AttentionRef),
      Case("bool mask [B, 1, Sq, St], softcap, softmax output").Def(
              Attn({"M"}, 4, {Arg("has_mask", 1), Arg("softcap", 0.8f), Arg("qk_matmul_output_mode", 3)}))
          .Inputs({In({2, 2, 4, 4}), In({2, 2, 5, 4}), In({2, 2, 5, 4}), In({2, 1, 4, 5}, DataType::Bool)})
          .Ref(AttentionRef),
      Case("short mask last dim padded, 3-D GQA with past").Def(
              Attn({"M", "PK", "PV"}, 3, {Arg("has_mask", 1), Arg("has_past", 1), Arg("q_num_heads", 6),
                                          Arg("kv_num_heads", 3)}))
          .Inputs({In({1, 2, 12}), In({1, 2, 6}), In({1, 2, 9}), In({2, 3}), In({1, 3, 2, 2}), In({1, 3, 2, 3})})
          .Ref(AttentionRef),
      Case("nonpad_kv_seqlen, causal, left window 1").Def(
              Attn({"N"}, 1, {Arg("has_nonpad", 1), Arg("is_causal", 1), Arg("left_window_size", 1)}))
          .Inputs({In({2, 2, 3, 4}), In({2, 2, 6, 4}), In({2, 2, 6, 4}), In({2}, DataType::Int64).Values({5, 2})})
          .Ref(AttentionRef),
      Case("float16, causal, grouped-query 4/2 heads").Def(Attn({}, 1, {Arg("is_causal", 1)}))
          .Inputs({In({1, 4, 3, 8}, DataType::Float16), In({1, 2, 5, 8}, DataType::Float16), In({1, 2, 5, 8}, DataType::Float16)})
          .Ref(AttentionRef),
      Case("bidirectional window, double").Def(Attn({}, 1, {Arg("left_window_size", 1), Arg("right_window_size", 2)}))
          .Inputs({In({1, 2, 5, 3}, DataType::Double), In({1, 2, 5, 3}, DataType::Double), In({1, 2, 5, 3}, DataType::Double)})
          .Ref(AttentionRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(RotaryEmbedding) {
  std::vector<Case> c = {
      Case("4-D halves, position_ids").Def(Op("RotaryEmbedding", {"X", "C", "S", "P"}, {"Y"}, {Arg("has_position_ids", 1)}))
          .Inputs({In({2, 3, 4, 8}), In({10, 4}), In({10, 4}), In({2, 4}, DataType::Int64).Range(0, 9)}).Ref(RotaryRef),
      Case("3-D interleaved, rotary dim 4 of 6").Def(Op("RotaryEmbedding", {"X", "C", "S"}, {"Y"},
                                                         {Arg("interleaved", 1), Arg("rotary_embedding_dim", 4),
                                                          Arg("num_heads", 2)}))
          .Inputs({In({2, 3, 12}), In({2, 3, 2}), In({2, 3, 2})}).Ref(RotaryRef),
      Case("4-D interleaved, float16").Def(Op("RotaryEmbedding", {"X", "C", "S"}, {"Y"}, {Arg("interleaved", 1)}))
          .Inputs({In({1, 2, 3, 4}, DataType::Float16), In({1, 3, 2}, DataType::Float16), In({1, 3, 2}, DataType::Float16)})
          .Ref(RotaryRef),
      Case("4-D halves, rotary dim 2, double").Def(Op("RotaryEmbedding", {"X", "C", "S"}, {"Y"}, {Arg("rotary_embedding_dim", 2)}))
          .Inputs({In({1, 2, 3, 4}, DataType::Double), In({1, 3, 1}, DataType::Double), In({1, 3, 1}, DataType::Double)})
          .Ref(RotaryRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(SwiGLU) {
  const auto ref = [](const caffe2::OperatorDef& def, const RefTensors& in) {
    const double alpha = def.arg_size() ? def.arg(0).f() : 1.0;
    RefTensor Y(in[0].shape, in[0].dtype);
    for (int64_t k = 0; k < Y.numel(); ++k) Y[k] = in[0][k] * in[1][k] / (1 + std::exp(-alpha * in[0][k]));
    return RefTensors{Y};
  };
  std::vector<Case> c = {
      Case("default alpha").Def(Op("SwiGLU", {"A", "B"}, {"Y"})).Inputs({In({3, 8}).Range(-4, 4), In({3, 8})}).Ref(ref),
      Case("alpha 1.702, float16").Def(Op("SwiGLU", {"A", "B"}, {"Y"}, {Arg("alpha", 1.702f)}))
          .Inputs({In({2, 5}, DataType::Float16).Range(-3, 3), In({2, 5}, DataType::Float16)}).Ref(ref),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

namespace {
Tensor Zeros(std::vector<int64_t> shape, DataType t = DataType::Float) {
  Tensor x(shape, t);
  std::memset(x.raw_mutable_data(t), 0, x.nbytes());
  return x;
}
}  // namespace

TEST_CASE("Attention refuses bad ranks, head counts, masks and dtypes, naming op and blob", "[attention]") {
  using optest::RunError;
  const auto q4 = Zeros({2, 4, 3, 8}), k4 = Zeros({2, 2, 5, 8});
  CHECK_THAT(RunError(Attn({}, 1, {}), {Zeros({2, 3, 8}), Zeros({2, 5, 8}), Zeros({2, 5, 8})}),
             Catch::Contains("Attention") && Catch::Contains("q_num_heads"));
  CHECK_THAT(RunError(Attn({}, 1, {}), {Zeros({8}), Zeros({8}), Zeros({8})}), Catch::Contains("'Q'") && Catch::Contains("4-D"));
  CHECK_THAT(RunError(Attn({}, 1, {}), {q4, Zeros({2, 5, 8}), k4}), Catch::Contains("'K'") && Catch::Contains("rank"));
  CHECK_THAT(RunError(Attn({}, 1, {}), {q4, Zeros({2, 3, 5, 8}), Zeros({2, 3, 5, 8})}),
             Catch::Contains("not a multiple of 3"));
  CHECK_THAT(RunError(Attn({}, 1, {Arg("q_num_heads", 5), Arg("kv_num_heads", 2)}),
                      {Zeros({2, 3, 24}), Zeros({2, 5, 8}), Zeros({2, 5, 8})}),
             Catch::Contains("hidden size 24"));
  CHECK_THAT(RunError(Attn({}, 1, {}), {q4, Zeros({2, 2, 5, 6}), k4}), Catch::Contains("head size 6"));
  CHECK_THAT(RunError(Attn({"M"}, 1, {Arg("has_mask", 1)}), {q4, k4, k4, Zeros({4, 5})}),
             Catch::Contains("'M'") && Catch::Contains("does not broadcast"));
  CHECK_THAT(RunError(Attn({"M"}, 1, {Arg("has_mask", 1)}), {q4, k4, k4, Zeros({3, 6})}),
             Catch::Contains("does not broadcast"));
  CHECK_THAT(RunError(Attn({"M"}, 1, {Arg("has_mask", 1)}), {q4, k4, k4, Zeros({1, 1, 1, 3, 5})}),
             Catch::Contains("does not broadcast"));
  CHECK_THAT(RunError(Attn({"M"}, 1, {Arg("has_mask", 1)}), {q4, k4, k4, Zeros({3, 5}, DataType::Int32)}),
             Catch::Contains("'M'") && Catch::Contains("int32"));
  CHECK_THAT(RunError(Attn({}, 1, {}), {Zeros({2, 4, 3, 8}, DataType::Int32), k4, k4}), Catch::Contains("float32"));
  CHECK_THAT(RunError(Attn({}, 1, {}), {q4, Zeros({2, 2, 5, 8}, DataType::Double), k4}), Catch::Contains("one dtype"));
  CHECK_THAT(RunError(Attn({"PK", "PV"}, 3, {Arg("has_past", 1)}), {q4, k4, k4, Zeros({2, 2, 4, 7}), Zeros({2, 2, 4, 8})}),
             Catch::Contains("'PK'"));
  CHECK_THAT(RunError(Attn({"N"}, 1, {Arg("has_nonpad", 1)}), {q4, k4, k4, Zeros({3}, DataType::Int64)}),
             Catch::Contains("nonpad_kv_seqlen"));
  auto extreme = Zeros({2}, DataType::Int64);  // far outside [0, kv length]: all valid / all masked, no overflow
  extreme.mutable_data<int64_t>()[0] = INT64_MAX, extreme.mutable_data<int64_t>()[1] = INT64_MIN;
  CHECK(RunError(Attn({"N"}, 1, {Arg("has_nonpad", 1), Arg("is_causal", 1), Arg("left_window_size", 2)}),
                 {q4, k4, k4, extreme}) == "");
  CHECK_THAT(RunError(Attn({}, 1, {Arg("has_mask", 1)}), {q4, k4, k4}), Catch::Contains("inputs"));
  CHECK_THAT(RunError(Attn({}, 1, {Arg("qk_matmul_output_mode", 4)}), {q4, k4, k4}), Catch::Contains("0-3"));
}

// bfloat16 (no harness input generator): the same inputs rounded to bfloat16 give the float32 result
// within bfloat16's precision.
TEST_CASE("Attention on bfloat16 inputs agrees with float32", "[attention]") {
  const std::vector<std::vector<int64_t>> shapes{{1, 2, 3, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}};
  Workspace ws32, ws16;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor f(shapes[i], DataType::Float), b(shapes[i], DataType::BFloat16);
    float* pf = f.mutable_data<float>();
    BFloat16* pb = b.mutable_data<BFloat16>();
    for (int64_t k = 0; k < f.numel(); ++k) {
      pb[k] = FloatToBFloat16(std::sin(0.7f * static_cast<float>(k + 5 * i)));
      pf[k] = BFloat16ToFloat(pb[k]);
    }
    *ws32.CreateBlob(std::string(1, "QKV"[i]))->GetMutable<Tensor>() = f;
    *ws16.CreateBlob(std::string(1, "QKV"[i]))->GetMutable<Tensor>() = b;
  }
  const auto def = Attn({}, 1, {Arg("is_causal", 1)});
  CreateOperator(def, &ws32)->Run();
  CreateOperator(def, &ws16)->Run();
  const Tensor &y32 = ws32.GetBlobOrThrow("Y").GetTensor(), &y16 = ws16.GetBlobOrThrow("Y").GetTensor();
  REQUIRE(y16.dtype() == DataType::BFloat16);
  REQUIRE(y16.sizes() == y32.sizes());
  double worst = 0;
  for (int64_t k = 0; k < y32.numel(); ++k)
    worst = std::max<double>(worst, std::fabs(BFloat16ToFloat(y16.data<BFloat16>()[k]) - y32.data<float>()[k]) /
                                        std::max(1.0f, std::fabs(y32.data<float>()[k])));
  CHECK(worst < 0.03);
}

TEST_CASE("SwiGLU refuses mismatched shapes and dtypes", "[attention]") {
  using optest::RunError;
  const auto def = Op("SwiGLU", {"A", "B"}, {"Y"});
  CHECK_THAT(RunError(def, {Zeros({2, 3}), Zeros({3})}), Catch::Contains("SwiGLU") && Catch::Contains("'B'"));
  CHECK_THAT(RunError(def, {Zeros({3}, DataType::Int32), Zeros({3}, DataType::Int32)}), Catch::Contains("float32"));
}

TEST_CASE("RotaryEmbedding refuses bad ranks, caches, dims and position ids", "[attention]") {
  using optest::RunError;
  const auto rope = [](std::vector<caffe2::Argument> args, bool pos) {
    return Op("RotaryEmbedding", pos ? std::vector<std::string>{"X", "C", "S", "P"} : std::vector<std::string>{"X", "C", "S"},
              {"Y"}, args);
  };
  auto ids = Zeros({1, 3}, DataType::Int64);
  ids.mutable_data<int64_t>()[1] = 7;
  CHECK_THAT(RunError(rope({}, false), {Zeros({2, 8}), Zeros({2, 4}), Zeros({2, 4})}),
             Catch::Contains("RotaryEmbedding") && Catch::Contains("'X'"));
  CHECK_THAT(RunError(rope({}, false), {Zeros({1, 3, 8}), Zeros({1, 3, 4}), Zeros({1, 3, 4})}), Catch::Contains("num_heads"));
  CHECK_THAT(RunError(rope({Arg("num_heads", 3)}, false), {Zeros({1, 3, 8}), Zeros({1, 3, 4}), Zeros({1, 3, 4})}),
             Catch::Contains("num_heads"));
  CHECK_THAT(RunError(rope({Arg("rotary_embedding_dim", 3)}, false), {Zeros({1, 1, 3, 8}), Zeros({1, 3, 1}), Zeros({1, 3, 1})}),
             Catch::Contains("even"));
  CHECK_THAT(RunError(rope({}, false), {Zeros({1, 1, 3, 8}), Zeros({1, 3, 3}), Zeros({1, 3, 4})}),
             Catch::Contains("'C'") && Catch::Contains("cos_cache"));
  CHECK_THAT(RunError(rope({Arg("has_position_ids", 1)}, true), {Zeros({1, 1, 3, 8}), Zeros({5, 4}), Zeros({5, 4}), ids}),
             Catch::Contains("'P'") && Catch::Contains("holds 7"));
  CHECK_THAT(RunError(rope({Arg("has_position_ids", 1)}, true),
                      {Zeros({1, 1, 3, 8}), Zeros({5, 4}), Zeros({5, 4}), Zeros({3}, DataType::Int64)}),
             Catch::Contains("int64 [1, 3]"));
  CHECK_THAT(RunError(rope({}, false), {Zeros({1, 1, 3, 8}), Zeros({1, 3, 4}, DataType::Double), Zeros({1, 3, 4})}),
             Catch::Contains("one dtype"));
}

}  // namespace harness
}  // namespace hetnet
