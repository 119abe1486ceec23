// Attention(Q, K, V, [attn_mask], [past_key, past_value], [nonpad_kv_seqlen])
//   -> Y, [present_key, [present_value, [qk_matmul_output]]]
// ONNX's Attention (opsets 23-25) as one CPU kernel: scaled dot-product attention per head.
//
// Inputs are 4-D (Q [B, Hq, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv]) or 3-D with the heads
// packed in the last dim (Q [B, Sq, Hq*D], K [B, Skv, Hkv*D], V [B, Skv, Hkv*Dv]; args q_num_heads and
// kv_num_heads required); Y has Q's layout ([B, Hq, Sq, Dv] or [B, Sq, Hq*Dv]). Grouped-query
// attention: Hq a multiple of Hkv, q head h reads kv head h / (Hq / Hkv).
// The optional inputs are present in that order as the has_* args say: has_mask (attn_mask, bool:
// true attends, or an additive float bias; broadcast numpy-style to [B, Hq, Sq, St] where St is the
// total kv length; a last dim shorter than St is padded with masked positions), has_past (past_key
// [B, Hkv, Sp, D] and past_value [B, Hkv, Sp, Dv] are prepended to K and V; present_key/value are the
// concatenations), has_nonpad (int64 nonpad_kv_seqlen [B]: keys j >= nonpad[b] are masked; not with
// a past).
// Args: scale (default 1/sqrt(D)), is_causal (query i attends key j <= i + offset, offset = Sp, or
// nonpad[b] - Sq with nonpad_kv_seqlen, else 0), left_window_size / right_window_size (-1: unbounded;
// key j allowed when i + offset - left <= j <= i + offset + right), softcap (> 0: scores become
// softcap * tanh(scores / softcap) before the mask), qk_matmul_output_mode (0/1: the scaled, softcapped
// scores; 2: plus the mask; 3: the softmax), softmax_precision (an ONNX dtype: with float16/bfloat16
// inputs, 1 or 11 runs the softmax in float32, else it rounds to the input type as ONNX's reference
// does). A query row whose every key is masked gives zeros (Y and mode 3). Q, K, V, the past and a
// float mask: float32, float64, float16 or bfloat16 (one dtype for Q/K/V/past); computed in float32
// (float64 for float64 inputs), with 16-bit inputs rounded to their type after each stage (scores,
// softmax steps) as numpy does. CPU only;
// no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class AttentionOp final : public Operator<CPUContext> {
 public:
  AttentionOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T, typename C>
  void Compute();

  int64_t q_num_heads_, kv_num_heads_;
  bool has_mask_, has_past_, has_nonpad_, is_causal_;
  bool has_scale_;
  float scale_, softcap_;
  int64_t qk_mode_, left_window_, right_window_, softmax_precision_;
};

}  // namespace hetnet
