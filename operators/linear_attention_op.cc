#include "operators/linear_attention_op.h"

#include <cmath>
#include <vector>

#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

LinearAttentionOp::LinearAttentionOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      has_past_(GetSingleArgument<int64_t>("has_past", 0) != 0),
      has_decay_(GetSingleArgument<int64_t>("has_decay", 0) != 0),
      has_beta_(GetSingleArgument<int64_t>("has_beta", 0) != 0),
      q_heads_(GetSingleArgument<int64_t>("q_num_heads", 0)),
      kv_heads_(GetSingleArgument<int64_t>("kv_num_heads", 0)),
      scale_(GetSingleArgument<float>("scale", 0.f)) {
  const std::string rule = GetSingleArgument<std::string>("update_rule", "gated_delta");
  HN_ENFORCE(rule == "linear" || rule == "gated" || rule == "delta" || rule == "gated_delta", def.type(),
             ": update_rule '", rule, "'; linear, gated, delta or gated_delta is required");
  gated_ = rule == "gated" || rule == "gated_delta";
  delta_ = rule == "delta" || rule == "gated_delta";
  HN_ENFORCE(has_decay_ == gated_ && has_beta_ == delta_, def.type(), ": update_rule '", rule, "' ",
             gated_ ? "needs" : "forbids", " decay and ", delta_ ? "needs" : "forbids", " beta (given: decay ",
             has_decay_ ? "yes" : "no", ", beta ", has_beta_ ? "yes" : "no", ")");
  HN_ENFORCE(def.input_size() == 3 + has_past_ + has_decay_ + has_beta_, def.type(), ": has_past/decay/beta say ",
             3 + has_past_ + has_decay_ + has_beta_, " inputs, the op has ", def.input_size());
  HN_ENFORCE(q_heads_ > 0 && kv_heads_ > 0 && q_heads_ % kv_heads_ == 0, def.type(), ": q_num_heads ", q_heads_,
             " must be a positive multiple of kv_num_heads ", kv_heads_);
  HN_ENFORCE(std::isfinite(scale_), def.type(), ": scale must be finite");
}

void LinearAttentionOp::RunOnDevice() {
  const DataType t = Input(0).dtype();
  for (int i = 1; i < InputSize(); ++i)
    HN_ENFORCE(Input(i).dtype() == t, type(), ": input ", i, " ('", def().input(i), "') is ",
               DataTypeName(Input(i).dtype()), " but query ('", def().input(0), "') is ", DataTypeName(t),
               "; all inputs must have one dtype");
  switch (t) {
    case DataType::Float: return Compute<float>();
    case DataType::Double: return Compute<double>();
    case DataType::Float16: return Compute<Half>();
    case DataType::BFloat16: return Compute<BFloat16>();
    default:
      HN_THROW(kInvalidArgument, type(), ": query ('", def().input(0), "') is ", DataTypeName(t),
               "; float32, float64, float16 or bfloat16 is required");
  }
}

template <typename T>
void LinearAttentionOp::Compute() {
  const Tensor &Q = Input(0), &K = Input(1), &V = Input(2);
  auto blob = [&](int i) { return std::string(" ('") + def().input(i) + "')"; };
  for (int i = 0; i < 3; ++i)
    HN_ENFORCE(Input(i).ndim() == 3, type(), ": input ", i, blob(i), " has shape ", Input(i).ShapeString(),
               "; 3-D [batch, seq, heads * head_size] is required");
  const int64_t B = Q.dim(0), S = Q.dim(1), Hq = q_heads_, Hkv = kv_heads_;
  HN_ENFORCE(Q.dim(2) % Hq == 0 && K.dim(2) % Hkv == 0 && V.dim(2) % Hkv == 0, type(), ": hidden sizes ", Q.dim(2),
             ", ", K.dim(2), ", ", V.dim(2), " of query", blob(0), ", key", blob(1), ", value", blob(2),
             " are not multiples of q_num_heads ", Hq, " / kv_num_heads ", Hkv);
  const int64_t dk = Q.dim(2) / Hq, dv = V.dim(2) / Hkv, group = Hq / Hkv;
  HN_ENFORCE(K.dim(2) / Hkv == dk && K.dim(0) == B && V.dim(0) == B && K.dim(1) == S && V.dim(1) == S, type(),
             ": key", blob(1), " ", K.ShapeString(), " / value", blob(2), " ", V.ShapeString(),
             " do not match query", blob(0), " ", Q.ShapeString(), " (head size ", dk, ")");
  int next = 3;
  const T* past = nullptr;
  if (has_past_) {
    const Tensor& P = Input(next);
    HN_ENFORCE(P.sizes() == std::vector<int64_t>({B, Hkv, dk, dv}), type(), ": past_state", blob(next), " has shape ",
               P.ShapeString(), "; [", B, ", ", Hkv, ", ", dk, ", ", dv, "] is required");
    past = P.data<T>(), ++next;
  }
  const T *decay = nullptr, *beta = nullptr;
  int64_t decay_w = 0, beta_w = 0;
  if (has_decay_) {
    const Tensor& D = Input(next);
    decay_w = D.ndim() == 3 ? D.dim(2) : -1;
    HN_ENFORCE(D.ndim() == 3 && D.dim(0) == B && D.dim(1) == S && (decay_w == Hkv || decay_w == Hkv * dk), type(),
               ": decay", blob(next), " has shape ", D.ShapeString(), "; [", B, ", ", S, ", ", Hkv, " or ", Hkv * dk,
               "] is required");
    decay = D.data<T>(), ++next;
  }
  if (has_beta_) {
    const Tensor& Bt = Input(next);
    beta_w = Bt.ndim() == 3 ? Bt.dim(2) : -1;
    HN_ENFORCE(Bt.ndim() == 3 && Bt.dim(0) == B && Bt.dim(1) == S && (beta_w == Hkv || beta_w == 1), type(), ": beta",
               blob(next), " has shape ", Bt.ShapeString(), "; [", B, ", ", S, ", ", Hkv, " or 1] is required");
    beta = Bt.data<T>();
  }
  const float scale = scale_ != 0 ? scale_ : 1.0f / std::sqrt(static_cast<float>(dk));
  const T *q = Q.data<T>(), *k = K.data<T>(), *v = V.data<T>();
  T* out = Output(0, {B, S, Hq * dv}, Q.dtype())->template mutable_data<T>();
  T* present = OutputSize() > 1 ? Output(1, {B, Hkv, dk, dv}, Q.dtype())->template mutable_data<T>() : nullptr;
  std::vector<float> st(static_cast<size_t>(dk * dv)), vt(static_cast<size_t>(dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t g = 0; g < Hkv; ++g) {
      const int64_t base = (b * Hkv + g) * dk * dv;
      for (int64_t e = 0; e < dk * dv; ++e) st[e] = past ? ToCompute<float>(past[base + e]) : 0.f;
      for (int64_t t = 0; t < S; ++t) {
        const int64_t row = b * S + t;
        const T* kt = k + row * Hkv * dk + g * dk;
        if (gated_)
          for (int64_t d = 0; d < dk; ++d) {
            const float f = std::exp(ToCompute<float>(decay[row * decay_w + (decay_w == Hkv ? g : g * dk + d)]));
            for (int64_t m = 0; m < dv; ++m) st[d * dv + m] *= f;
          }
        for (int64_t m = 0; m < dv; ++m) vt[m] = ToCompute<float>(v[row * Hkv * dv + g * dv + m]);
        if (delta_) {
          const float bt = ToCompute<float>(beta[row * beta_w + (beta_w == 1 ? 0 : g)]);
          for (int64_t m = 0; m < dv; ++m) {
            float r = 0;
            for (int64_t d = 0; d < dk; ++d) r += st[d * dv + m] * ToCompute<float>(kt[d]);
            vt[m] = bt * (vt[m] - r);
          }
        }
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m) st[d * dv + m] += ToCompute<float>(kt[d]) * vt[m];
        for (int64_t h = g * group; h < (g + 1) * group; ++h) {
          const T* qt = q + row * Hq * dk + h * dk;
          for (int64_t m = 0; m < dv; ++m) {
            float acc = 0;
            for (int64_t d = 0; d < dk; ++d) acc += ToCompute<float>(qt[d]) * st[d * dv + m];
            out[row * Hq * dv + h * dv + m] = FromCompute<T, float>(scale * acc);
          }
        }
      }
      if (present)
        for (int64_t e = 0; e < dk * dv; ++e) present[base + e] = FromCompute<T, float>(st[e]);
    }
}

OPERATOR_SCHEMA(LinearAttention).NumInputs(3, 6).NumOutputs(1, 2)
    .SetDoc("ONNX's LinearAttention (opset 27): a recurrent [dk, dv] state per kv head, update_rule linear / gated "
            "(decay) / delta (beta) / gated_delta, grouped query heads, past_state in, present_state out; optional "
            "inputs present as args has_past, has_decay, has_beta say. Computed in float32. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(LinearAttention, LinearAttentionOp);

}  // namespace hetnet
