// RotaryEmbedding(X, cos_cache, sin_cache, [position_ids]) -> Y: ONNX's RotaryEmbedding (opset 23).
// X is 4-D [B, H, S, D] or 3-D [B, S, H*D] (arg num_heads required); the first rotary_embedding_dim
// (R; 0: D) features of each head are rotated as complex pairs, (x1, x2) -> (cos*x1 - sin*x2,
// sin*x1 + cos*x2), the rest pass through. The pairs are the two halves of the R features, or with
// interleaved=1 the even/odd features. With has_position_ids=1, position_ids (int64 [B, S], each in
// [0, P)) pick the rows of cos/sin_cache [P, R/2]; without, the caches are [B, S, R/2].
// float32, float64, float16 or bfloat16 (X and the caches one dtype); computed in float32 (float64 for
// float64). CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class RotaryEmbeddingOp final : public Operator<CPUContext> {
 public:
  RotaryEmbeddingOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T, typename C>
  void Compute();

  bool interleaved_, has_position_ids_;
  int64_t rotary_dim_, num_heads_;
};

}  // namespace hetnet
