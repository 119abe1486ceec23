// Converters of the attention family onto CPU hetnet operators of the same name: Attention (opsets
// 23-25; operators/attention_op), RotaryEmbedding (opset 23; operators/rotary_embedding_op),
// LinearAttention (opset 27; operators/linear_attention_op), SwiGLU (opset 28; operators/swiglu_op).
// Registered from RegisterNnConverters.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

// Attention: the optional inputs that are given, in order, with has_* args saying which; omitted
// outputs before the last one requested get fresh (unread) names.
void Attention(ConvertContext& c) {
  for (int i = 0; i < 3; ++i)
    if (!c.has_in(i)) c.Refuse("inputs Q, K and V are required");
  if (c.has_in(4) != c.has_in(5)) c.Refuse("past_key and past_value must be given together");
  if (c.has_in(6) && c.has_in(4)) c.Refuse("nonpad_kv_seqlen cannot be combined with past_key/past_value");
  std::vector<std::string> ins{c.in(0), c.in(1), c.in(2)};
  for (int i = 3; i < 7; ++i)
    if (c.has_in(i)) ins.push_back(c.in(i));
  int last = 0;
  for (int i = 0; i < c.num_outputs() && i < 4; ++i)
    if (c.has_out(i)) last = i;
  std::vector<std::string> outs;
  for (int i = 0; i <= last; ++i) outs.push_back(c.has_out(i) ? c.out(i) : c.Fresh(c.out(0) + "_unused"));
  if (c.opset() >= 25 && c.Rank(c.in(0)) == 4 && (c.Has("q_num_heads") || c.Has("kv_num_heads")))
    c.Refuse("q_num_heads and kv_num_heads must not be given with 4-D inputs (opset 25)");
  if (c.Has("softmax_precision")) {
    const int64_t p = c.Int("softmax_precision", 1);
    if (p != onnx::TensorProto::FLOAT && p != onnx::TensorProto::FLOAT16 && p != onnx::TensorProto::DOUBLE &&
        p != onnx::TensorProto::BFLOAT16)
      c.Refuse("softmax_precision " + std::to_string(p) + " is not a float type");
  }
  auto& op = c.Emit("Attention", ins, outs);
  if (c.Has("softmax_precision")) AddArg(op, "softmax_precision", c.Int("softmax_precision", 1));
  AddArg(op, "has_mask", int64_t{c.has_in(3)});
  AddArg(op, "has_past", int64_t{c.has_in(4)});
  AddArg(op, "has_nonpad", int64_t{c.has_in(6)});
  for (const char* a : {"q_num_heads", "kv_num_heads", "is_causal", "qk_matmul_output_mode", "left_window_size",
                        "right_window_size"})
    if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
  for (const char* a : {"scale", "softcap"})
    if (c.Has(a)) AddArgF(op, a, c.Float(a, 0.f));
  if (c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), c.Rank(c.in(0)));
  for (size_t i = 1; i < outs.size(); ++i) c.SetRank(outs[i], 4);
}

void RotaryEmbedding(ConvertContext& c) {
  for (int i = 0; i < 3; ++i)
    if (!c.has_in(i)) c.Refuse("inputs X, cos_cache and sin_cache are required");
  std::vector<std::string> ins{c.in(0), c.in(1), c.in(2)};
  if (c.has_in(3)) ins.push_back(c.in(3));
  auto& op = c.Emit("RotaryEmbedding", ins, {c.out(0)});
  AddArg(op, "has_position_ids", int64_t{c.has_in(3)});
  for (const char* a : {"interleaved", "rotary_embedding_dim", "num_heads"})
    if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
  c.SameDims(c.out(0), c.in(0));
}

void LinearAttention(ConvertContext& c) {
  for (int i = 0; i < 3; ++i)
    if (!c.has_in(i)) c.Refuse("inputs query, key and value are required");
  if (!c.Has("q_num_heads") || !c.Has("kv_num_heads")) c.Refuse("attributes q_num_heads and kv_num_heads are required");
  std::vector<std::string> ins{c.in(0), c.in(1), c.in(2)};
  for (int i = 3; i < 6; ++i)
    if (c.has_in(i)) ins.push_back(c.in(i));
  std::vector<std::string> outs{c.has_out(0) ? c.out(0) : c.Fresh("linear_attention_unused")};
  if (c.has_out(1)) outs.push_back(c.out(1));
  auto& op = c.Emit("LinearAttention", ins, outs);
  AddArg(op, "has_past", int64_t{c.has_in(3)});
  AddArg(op, "has_decay", int64_t{c.has_in(4)});
  AddArg(op, "has_beta", int64_t{c.has_in(5)});
  AddArg(op, "q_num_heads", c.Int("q_num_heads", 0));
  AddArg(op, "kv_num_heads", c.Int("kv_num_heads", 0));
  if (c.Has("scale")) AddArgF(op, "scale", c.Float("scale", 0.f));
  if (c.Has("update_rule")) AddArg(op, "update_rule", c.Str("update_rule", "gated_delta"));
  c.SetRank(outs[0], 3);
  if (outs.size() > 1) c.SetRank(outs[1], 4);
}

}  // namespace

void RegisterAttentionConverters(ConverterRegistry& r) {
  r.Add("Attention", 23, kNewestOpset, Attention);
  r.Add("RotaryEmbedding", 23, kNewestOpset, RotaryEmbedding);
  r.Add("LinearAttention", 27, kNewestOpset, LinearAttention);
  r.Add("SwiGLU", 28, kNewestOpset, [](ConvertContext& c) {
    if (!c.has_in(0) || !c.has_in(1)) c.Refuse("inputs A and B are required");
    auto& op = c.Emit("SwiGLU", {c.in(0), c.in(1)}, {c.out(0)});
    if (c.Has("alpha")) AddArgF(op, "alpha", c.Float("alpha", 1.f));
    c.SameDims(c.out(0), c.in(0));
  });
}

}  // namespace hetnet::onnxio
