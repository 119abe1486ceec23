// ai.onnx.preview FlexAttention: scaled dot-product attention over rank-4 Q, K, V with optional
// score_mod / prob_mod subgraphs (one tensor in, one out) applied to the scores and to the
// probabilities. Without modifiers it is our Attention operator (GQA, scale, softmax precision,
// float16/32/64). With them: BatchMatMul(Q, K^T) * scale -> score_mod -> Softmax -> prob_mod ->
// BatchMatMul(., V) in float32, each modifier imported inline (onnx_subgraph_import.h) on the
// scores' blob; the heads of Q, K and V must then agree (no GQA) and the inputs be float32.
#include <cmath>
#include <map>

#include "onnx/onnx_subgraph_import.h"

namespace hetnet::onnxio {

namespace {

// The blob that subgraph `attr` makes from x (the subgraph's one input), its operators emitted here.
// Every name the subgraph makes (its input, constants and results) is renamed fresh, so that both
// modifiers, or a modifier and the enclosing graph, may use the same local names.
std::string ApplyModifier(ConvertContext& c, const std::string& attr, const std::string& x,
                          const std::vector<int64_t>* dims) {
  LocalInfo in;
  in.dims = dims;
  in.dtype = caffe2::TensorProto::FLOAT;
  const auto s = ConvertSubgraph(c, attr, {in});
  const std::string node = NodeName(c);
  HN_CHECK_KIND(kInvalidArgument, s->net.external_input_size() == 1 && s->net.external_output_size() == 1, node,
                ": subgraph '", attr, "' has ", s->net.external_input_size(), " inputs and ",
                s->net.external_output_size(), " outputs, expected one of each (a rank-4 tensor)");
  if (s->out_consts[0]) c.Refuse(attr + "'s output does not depend on its input");
  std::map<std::string, std::string> local;
  auto rename = [&](const std::string& n) {
    auto it = local.find(n);
    return it == local.end() ? n : it->second;
  };
  local[s->net.external_input(0)] = c.Fresh(c.out(0) + "_" + attr + "_in");
  for (const auto& [name, k] : s->consts) local[name] = c.Fresh(c.out(0) + "_" + attr + "_" + name);
  for (int i = s->num_fills; i < s->net.op_size(); ++i)
    for (const auto& o : s->net.op(i).output()) local.emplace(o, c.Fresh(c.out(0) + "_" + attr + "_" + o));
  c.Emit("Copy", {x}, {rename(s->net.external_input(0))});
  EmitSubnetOps(c, *s, rename);
  return rename(s->net.external_output(0));
}

void FlexAttention(ConvertContext& c) {
  for (int i = 0; i < 3; ++i)
    if (!c.has_in(i)) c.Refuse("inputs Q, K and V are required");
  for (int i = 0; i < 3; ++i)
    if (c.Rank(c.in(i)) >= 0 && c.Rank(c.in(i)) != 4) c.Refuse("Q, K and V must be rank-4 tensors");
  const bool mods = c.Has("score_mod") || c.Has("prob_mod");
  if (!mods) {
    auto& op = c.Emit("Attention", {c.in(0), c.in(1), c.in(2)}, {c.out(0)});
    for (const char* a : {"has_mask", "has_past", "has_nonpad"}) AddArg(op, a, int64_t{0});
    if (c.Has("scale")) AddArgF(op, "scale", c.Float("scale", 0.f));
    if (c.Has("softmax_precision")) AddArg(op, "softmax_precision", c.Int("softmax_precision", 1));
    c.SetRank(c.out(0), 4);
    return;
  }
  for (int i = 0; i < 3; ++i) {
    const auto dt = c.Dtype(c.in(i));
    if (dt != caffe2::TensorProto::UNDEFINED && dt != caffe2::TensorProto::FLOAT)
      c.Refuse("score_mod / prob_mod are supported for float32 inputs only");
  }
  const auto *dq = c.Dims(c.in(0)), *dk = c.Dims(c.in(1)), *dv = c.Dims(c.in(2));
  if (!dq || !dk || !dv || (*dq)[1] < 0 || (*dq)[1] != (*dk)[1] || (*dk)[1] != (*dv)[1])
    c.Refuse("with score_mod / prob_mod the numbers of heads of Q, K and V must be known and equal (no GQA)");
  float scale = c.Float("scale", 0.f);
  if (!c.Has("scale")) {
    if ((*dq)[3] <= 0) c.Refuse("the default scale needs Q's head size");
    scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>((*dq)[3])));
  }
  const std::vector<int64_t> score_dims{(*dq)[0], (*dq)[1], (*dq)[2], (*dk)[2]};
  const std::string qk = c.Fresh(c.out(0) + "_qk"), scores = c.Fresh(c.out(0) + "_scores");
  auto& mm = c.Emit("BatchMatMul", {c.in(0), c.in(1)}, {qk});
  AddArg(mm, "trans_b", int64_t{1});
  AddArg(mm, "broadcast", int64_t{1});
  AddArgF(c.Emit("Scale", {qk}, {scores}), "scale", scale);
  c.SetDims(scores, score_dims);
  const std::string modded = c.Has("score_mod") ? ApplyModifier(c, "score_mod", scores, &score_dims) : scores;
  const std::string probs = c.Fresh(c.out(0) + "_probs");
  AddArg(c.Emit("Softmax", {modded}, {probs}), "axis", int64_t{-1});
  c.SetDims(probs, score_dims);
  const std::string weights = c.Has("prob_mod") ? ApplyModifier(c, "prob_mod", probs, &score_dims) : probs;
  AddArg(c.Emit("BatchMatMul", {weights, c.in(2)}, {c.out(0)}), "broadcast", int64_t{1});
  c.SetDims(c.out(0), {(*dq)[0], (*dq)[1], (*dq)[2], (*dv)[3]});
}

}  // namespace

void RegisterFlexAttentionConverters(ConverterRegistry& r) { r.Add("ai.onnx.preview::FlexAttention", FlexAttention); }

}  // namespace hetnet::onnxio
