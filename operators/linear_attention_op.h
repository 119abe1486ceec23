// LinearAttention(query, key, value, [past_state], [decay], [beta]) -> output, present_state: ONNX's
// LinearAttention (opset 27), a recurrent state S [B, Hkv, dk, dv] updated per step t and read by
// the query heads (grouped: q head h reads kv head h / (Hq / Hkv)):
//   gated (update_rule gated, gated_delta):  S *= exp(decay_t)  (decay per kv head, or per key feature)
//   delta (delta, gated_delta):              v_t = beta_t * (v_t - S^T k_t)
//   then S += k_t v_t^T and output_t = scale * S^T q_t (scale 0 or absent: 1/sqrt(dk)).
// query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv], decay [B, T, Hkv] or [B, T, Hkv*dk],
// beta [B, T, Hkv] or [B, T, 1], past_state [B, Hkv, dk, dv] (zeros when absent); output [B, T, Hq*dv].
// The optional inputs are present as args has_past, has_decay, has_beta say; args q_num_heads,
// kv_num_heads (required), scale, update_rule (default gated_delta). Computed in float32 as ONNX's
// reference; inputs float32, float64, float16 or bfloat16 of one dtype. CPU only; no gradient.
#pragma once

#include <string>

#include "core/operator.h"

namespace hetnet {

class LinearAttentionOp final : public Operator<CPUContext> {
 public:
  LinearAttentionOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T>
  void Compute();

  bool has_past_, has_decay_, has_beta_, gated_, delta_;
  int64_t q_heads_, kv_heads_;
  float scale_;
};

}  // namespace hetnet
