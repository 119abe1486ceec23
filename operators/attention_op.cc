#include "operators/attention_op.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/checked_size.h"
#include "core/half.h"
#include "operators/half_compute.h"
#include "core/op_schema.h"

namespace hetnet {

namespace {

// X (4-D [B, H, S, E], or 3-D [B, S, H*E] when packed) as [B, H, S, E] in C, times `mul` rounded to T.
template <typename T, typename C>
std::vector<C> LoadHeads(const Tensor& X, bool packed, int64_t H, C mul) {
  const T* x = X.data<T>();
  const int64_t B = X.dim(0), S = packed ? X.dim(1) : X.dim(2), E = packed ? X.dim(2) / H : X.dim(3);
  std::vector<C> out(static_cast<size_t>(X.numel()));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t e = 0; e < E; ++e) {
          const int64_t from = packed ? (b * S + s) * H * E + h * E + e : ((b * H + h) * S + s) * E + e;
          const C v = ToCompute<C>(x[from]);
          out[((b * H + h) * S + s) * E + e] = mul == C(1) ? v : RoundTo<T>(v * mul);
        }
  return out;
}

// [B, H, Sp, E] past followed by [B, H, S, E] cur along the sequence: [B, H, Sp + S, E].
template <typename C>
std::vector<C> ConcatSeq(const std::vector<C>& past, const std::vector<C>& cur, int64_t BH, int64_t Sp, int64_t S,
                         int64_t E) {
  std::vector<C> out(static_cast<size_t>(BH * (Sp + S) * E));
  for (int64_t g = 0; g < BH; ++g) {
    std::copy(past.begin() + g * Sp * E, past.begin() + (g + 1) * Sp * E, out.begin() + g * (Sp + S) * E);
    std::copy(cur.begin() + g * S * E, cur.begin() + (g + 1) * S * E, out.begin() + (g * (Sp + S) + Sp) * E);
  }
  return out;
}

// The attention mask as an additive bias in C (bool: true -> 0, false -> -inf).
template <typename C>
std::vector<C> LoadMask(const Tensor& M) {
  std::vector<C> out(static_cast<size_t>(M.numel()));
  const C neg_inf = -std::numeric_limits<C>::infinity();
  for (int64_t k = 0; k < M.numel(); ++k) {
    switch (M.dtype()) {
      case DataType::Bool: out[k] = M.data<bool>()[k] ? C(0) : neg_inf; break;
      case DataType::Float: out[k] = static_cast<C>(M.data<float>()[k]); break;
      case DataType::Double: out[k] = NarrowTo<C>(M.data<double>()[k]); break;
      case DataType::BFloat16: out[k] = static_cast<C>(BFloat16ToFloat(M.data<BFloat16>()[k])); break;
      default: out[k] = static_cast<C>(HalfToFloat(M.data<Half>()[k])); break;
    }
  }
  return out;
}

template <typename T, typename C>
void Store(Tensor* Y, const std::vector<C>& v) {
  T* y = Y->template mutable_data<T>();
  for (size_t k = 0; k < v.size(); ++k) y[k] = FromCompute<T, C>(v[k]);
}

}  // namespace

AttentionOp::AttentionOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      q_num_heads_(GetSingleArgument<int64_t>("q_num_heads", 0)),
      kv_num_heads_(GetSingleArgument<int64_t>("kv_num_heads", 0)),
      has_mask_(GetSingleArgument<int64_t>("has_mask", 0) != 0),
      has_past_(GetSingleArgument<int64_t>("has_past", 0) != 0),
      has_nonpad_(GetSingleArgument<int64_t>("has_nonpad", 0) != 0),
      is_causal_(GetSingleArgument<int64_t>("is_causal", 0) != 0),
      has_scale_(HasArgument("scale")),
      scale_(GetSingleArgument<float>("scale", 1.0f)),
      softcap_(GetSingleArgument<float>("softcap", 0.0f)),
      qk_mode_(GetSingleArgument<int64_t>("qk_matmul_output_mode", 0)),
      left_window_(GetSingleArgument<int64_t>("left_window_size", -1)),
      right_window_(GetSingleArgument<int64_t>("right_window_size", -1)),
      softmax_precision_(GetSingleArgument<int64_t>("softmax_precision", 0)) {
  const int want = 3 + has_mask_ + 2 * has_past_ + has_nonpad_;
  HN_ENFORCE(def.input_size() == want, def.type(), ": has_mask/has_past/has_nonpad say ", want, " inputs, the op has ",
             def.input_size());
  HN_ENFORCE(qk_mode_ >= 0 && qk_mode_ <= 3, def.type(), ": qk_matmul_output_mode is ", qk_mode_, "; 0-3 are defined");
  HN_ENFORCE(left_window_ >= -1 && right_window_ >= -1, def.type(), ": left/right_window_size are ", left_window_, "/",
             right_window_, "; -1 (unbounded) or a size >= 0 is required");
  HN_ENFORCE(std::isfinite(softcap_) && std::isfinite(scale_), def.type(), ": scale and softcap must be finite");
}

void AttentionOp::RunOnDevice() {
  // Q, K, V and the past key/value share a dtype; the mask (input 3 when present) may be bool.
  const int past = 3 + has_mask_;
  std::vector<int> same{1, 2};
  if (has_past_) same.insert(same.end(), {past, past + 1});
  DispatchFloatCompute(*this, same, [this](auto t, auto c) { Compute<decltype(t), decltype(c)>(); });
}

template <typename T, typename C>
void AttentionOp::Compute() {
  const Tensor &Q = Input(0), &K = Input(1), &V = Input(2);
  auto blob = [&](int i) { return std::string(" ('") + def().input(i) + "')"; };
  const int rank = Q.ndim();
  HN_ENFORCE(rank == 3 || rank == 4, type(), ": Q", blob(0), " has shape ", Q.ShapeString(),
             "; 3-D [batch, seq, heads * head_size] or 4-D [batch, heads, seq, head_size] is required");
  HN_ENFORCE(K.ndim() == rank && V.ndim() == rank, type(), ": K", blob(1), " ", K.ShapeString(), " and V", blob(2),
             " ", V.ShapeString(), " must have Q's rank ", rank);
  const bool packed = rank == 3;
  int64_t Hq = q_num_heads_, Hkv = kv_num_heads_;
  if (packed) {
    HN_ENFORCE(Hq > 0 && Hkv > 0, type(), ": 3-D inputs need args q_num_heads and kv_num_heads > 0 (got ", Hq, ", ",
               Hkv, ")");
    HN_ENFORCE(Q.dim(2) % Hq == 0, type(), ": Q", blob(0), " hidden size ", Q.dim(2),
               " is not a multiple of q_num_heads ", Hq);
    HN_ENFORCE(K.dim(2) % Hkv == 0 && V.dim(2) % Hkv == 0, type(), ": K", blob(1), " and V", blob(2),
               " hidden sizes ", K.dim(2), ", ", V.dim(2), " are not multiples of kv_num_heads ", Hkv);
  } else {
    HN_ENFORCE(Hq <= 0 || Hq == Q.dim(1), type(), ": q_num_heads ", Hq, " but Q", blob(0), " has ", Q.dim(1), " heads");
    HN_ENFORCE(Hkv <= 0 || Hkv == K.dim(1), type(), ": kv_num_heads ", Hkv, " but K", blob(1), " has ", K.dim(1),
               " heads");
    Hq = Q.dim(1), Hkv = K.dim(1);
    HN_ENFORCE(V.dim(1) == Hkv, type(), ": V", blob(2), " has ", V.dim(1), " heads but K", blob(1), " has ", Hkv);
  }
  HN_ENFORCE(Hkv > 0 && Hq % Hkv == 0, type(), ": ", Hq, " query heads are not a multiple of ", Hkv,
             " key/value heads (grouped-query attention needs that)");
  const int64_t B = Q.dim(0), Sq = Q.dim(packed ? 1 : 2), Skv = K.dim(packed ? 1 : 2);
  const int64_t D = packed ? Q.dim(2) / Hq : Q.dim(3), Dk = packed ? K.dim(2) / Hkv : K.dim(3);
  const int64_t Dv = packed ? V.dim(2) / Hkv : V.dim(3);
  HN_ENFORCE(K.dim(0) == B && V.dim(0) == B, type(), ": batch sizes differ: Q", blob(0), " ", Q.ShapeString(), ", K",
             blob(1), " ", K.ShapeString(), ", V", blob(2), " ", V.ShapeString());
  HN_ENFORCE(V.dim(packed ? 1 : 2) == Skv, type(), ": K", blob(1), " ", K.ShapeString(), " and V", blob(2), " ",
             V.ShapeString(), " have different sequence lengths");
  HN_ENFORCE(Dk == D, type(), ": K", blob(1), " head size ", Dk, " differs from Q", blob(0), "'s ", D);
  int next = 3 + has_mask_;
  int64_t Sp = 0;
  std::vector<C> Kt = LoadHeads<T, C>(K, packed, Hkv, C(1)), Vt = LoadHeads<T, C>(V, packed, Hkv, C(1));
  if (has_past_) {
    const Tensor &PK = Input(next), &PV = Input(next + 1);
    HN_ENFORCE(PK.ndim() == 4 && PV.ndim() == 4, type(), ": past_key", blob(next), " ", PK.ShapeString(),
               " and past_value", blob(next + 1), " ", PV.ShapeString(), " must be 4-D [batch, kv_heads, seq, size]");
    Sp = PK.dim(2);
    HN_ENFORCE(PK.dim(0) == B && PK.dim(1) == Hkv && PK.dim(3) == D && PV.dim(0) == B && PV.dim(1) == Hkv &&
                   PV.dim(2) == Sp && PV.dim(3) == Dv,
               type(), ": past_key", blob(next), " ", PK.ShapeString(), " / past_value", blob(next + 1), " ",
               PV.ShapeString(), " do not match [", B, ", ", Hkv, ", past_seq, ", D, "] / [", B, ", ", Hkv,
               ", past_seq, ", Dv, "]");
    Kt = ConcatSeq(LoadHeads<T, C>(PK, false, Hkv, C(1)), Kt, B * Hkv, Sp, Skv, D);
    Vt = ConcatSeq(LoadHeads<T, C>(PV, false, Hkv, C(1)), Vt, B * Hkv, Sp, Skv, Dv);
    next += 2;
  }
  const int64_t St = Sp + Skv;
  std::vector<int64_t> offset(static_cast<size_t>(B), Sp);  // per batch: keys before this query block
  std::vector<int64_t> valid(static_cast<size_t>(B), St);   // per batch: keys not padding
  if (has_nonpad_) {
    const Tensor& N = Input(next);
    HN_ENFORCE(!has_past_, type(), ": nonpad_kv_seqlen", blob(next), " cannot be combined with past_key/past_value");
    HN_ENFORCE(N.dtype() == DataType::Int64 && N.ndim() == 1 && N.dim(0) == B, type(), ": nonpad_kv_seqlen",
               blob(next), " is ", DataTypeName(N.dtype()), " ", N.ShapeString(), "; int64 [", B, "] is required");
    // Clamped where every larger (smaller) value gives the same masks, so i + offset cannot overflow.
    const int64_t bound = St + Sq + 1;
    for (int64_t b = 0; b < B; ++b)
      valid[b] = std::min(bound, std::max(-bound, N.data<int64_t>()[b])), offset[b] = valid[b] - Sq;
  }
  // The mask, broadcast to [B, Hq, Sq, St] (a shorter last dim: the rest masked).
  std::vector<C> mask;
  std::vector<int64_t> mstride(4, 0);
  int64_t mlast = St;
  if (has_mask_) {
    const Tensor& M = Input(3);
    const DataType mt = M.dtype();
    HN_ENFORCE(mt == DataType::Bool || mt == DataType::Float || mt == DataType::Double || mt == DataType::Float16 ||
                   mt == DataType::BFloat16,
               type(), ": attn_mask", blob(3), " is ", DataTypeName(mt), "; bool or a float dtype is required");
    const int r = M.ndim();
    const int64_t want[4] = {B, Hq, Sq, St};
    bool ok = r >= 1 && r <= 4 && M.dim(r - 1) <= St;
    for (int d = 0; ok && d < r - 1; ++d) ok = M.dim(d) == 1 || M.dim(d) == want[4 - r + d];
    HN_ENFORCE(ok, type(), ": attn_mask", blob(3), " has shape ", M.ShapeString(), ", which does not broadcast to [",
               B, ", ", Hq, ", ", Sq, ", ", St, "] (batch, q heads, q seq, total kv seq; the last dim may be shorter)");
    mlast = M.dim(r - 1);
    for (int64_t d = r - 1, s = 1; d >= 0; --d) {
      mstride[4 - r + d] = M.dim(d) == 1 && d != r - 1 ? 0 : s;
      s *= M.dim(d);
    }
    mask = LoadMask<C>(M);
  }
  const C scale = RoundTo<T>(static_cast<C>(std::sqrt(has_scale_ ? static_cast<double>(scale_) : 1.0 / std::sqrt(D))));
  const std::vector<C> Qs = LoadHeads<T, C>(Q, packed, Hq, scale);
  std::vector<C> Ks(Kt.size());
  for (size_t k = 0; k < Kt.size(); ++k) Ks[k] = RoundTo<T>(Kt[k] * scale);

  const std::vector<int64_t> y_dims = packed ? std::vector<int64_t>{B, Sq, Hq * Dv} : std::vector<int64_t>{B, Hq, Sq, Dv};
  const std::vector<int64_t> qk_dims{B, Hq, Sq, St};
  std::vector<C> y(static_cast<size_t>(CheckedNumel(y_dims, "Attention Y")), C(0));
  std::vector<C> qk(OutputSize() > 3 ? static_cast<size_t>(CheckedNumel(qk_dims, "Attention qk_matmul_output")) : 0);
  const C neg_inf = -std::numeric_limits<C>::infinity();
  // float16/bfloat16 inputs: the softmax runs in that type unless softmax_precision asks for float32/64.
  const bool low_softmax =
      kIs16BitFloat<T> && (softmax_precision_ == 0 || softmax_precision_ == 10 || softmax_precision_ == 16);
  std::vector<C> bias(static_cast<size_t>(St)), x(static_cast<size_t>(St)), p(static_cast<size_t>(St));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t g = b * Hkv + h / (Hq / Hkv);  // the kv head
      for (int64_t i = 0; i < Sq; ++i) {
        const int64_t pos = i + offset[b];
        bool all_masked = true;
        for (int64_t j = 0; j < St; ++j) {
          C v = 0;
          if (has_mask_) v = j < mlast ? mask[b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3]] : neg_inf;
          if ((is_causal_ && j > pos) || j >= valid[b] || (left_window_ >= 0 && pos - j > left_window_) ||
              (right_window_ >= 0 && j - pos > right_window_))
            v = neg_inf;
          bias[j] = v;
          all_masked = all_masked && v == neg_inf;
          C s = 0;
          const C* q = &Qs[((b * Hq + h) * Sq + i) * D];
          const C* k = &Ks[(g * St + j) * D];
          for (int64_t e = 0; e < D; ++e) s += q[e] * k[e];
          s = RoundTo<T>(s);
          if (softcap_ > 0) s = RoundTo<T>(RoundTo<T>(std::tanh(RoundTo<T>(s / softcap_))) * softcap_);
          x[j] = RoundTo<T>(s + v);
          if (!qk.empty() && qk_mode_ <= 2) qk[((b * Hq + h) * Sq + i) * St + j] = qk_mode_ == 2 ? x[j] : s;
        }
        // Softmax (a row of -inf gives zeros, not NaN); rows whose bias masks every key give zeros.
        C m = St ? *std::max_element(x.begin(), x.end()) : C(0);
        if (m == neg_inf) m = 0;
        C sum = 0;
        for (int64_t j = 0; j < St; ++j)
          sum += p[j] = low_softmax ? RoundTo<T>(std::exp(RoundTo<T>(x[j] - m))) : std::exp(x[j] - m);
        if (low_softmax) sum = RoundTo<T>(sum);
        if (sum == 0) sum = 1;
        for (int64_t j = 0; j < St; ++j) p[j] = all_masked ? C(0) : RoundTo<T>(p[j] / sum);
        if (!qk.empty() && qk_mode_ == 3) std::copy(p.begin(), p.end(), qk.begin() + ((b * Hq + h) * Sq + i) * St);
        for (int64_t e = 0; e < Dv; ++e) {
          C acc = 0;
          for (int64_t j = 0; j < St; ++j) acc += p[j] * Vt[(g * St + j) * Dv + e];
          y[packed ? (b * Sq + i) * Hq * Dv + h * Dv + e : ((b * Hq + h) * Sq + i) * Dv + e] = acc;
        }
      }
    }
  const DataType t = Q.dtype();
  Store<T>(Output(0, y_dims, t), y);
  if (OutputSize() > 1) Store<T>(Output(1, {B, Hkv, St, D}, t), Kt);
  if (OutputSize() > 2) Store<T>(Output(2, {B, Hkv, St, Dv}, t), Vt);
  if (OutputSize() > 3) Store<T>(Output(3, qk_dims, t), qk);
}

OPERATOR_SCHEMA(Attention).NumInputs(3, 7).NumOutputs(1, 4)
    .SetDoc("ONNX's Attention (opsets 23-25): Y = softmax(scale * Q K^T [softcapped] + mask) V per head, 3-D "
            "(q_num_heads/kv_num_heads) or 4-D inputs, grouped-query heads, bool/float attn_mask, is_causal, "
            "sliding window, past/present key and value, nonpad_kv_seqlen, qk_matmul_output (modes 0-3). Optional "
            "inputs are present as args has_mask, has_past, has_nonpad say. float32/64/16, bfloat16. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(Attention, AttentionOp);

}  // namespace hetnet
