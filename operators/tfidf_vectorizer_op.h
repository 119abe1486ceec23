// TfIdfVectorizer(X) -> Y: ONNX's TfIdfVectorizer (opset 9) on integer tokens. X int32/int64 [C] or
// [B, C]; Y float32 [O] or [B, O], O = max(ngram_indexes) + 1. The n-grams of lengths
// min_gram_length..max_gram_length whose tokens are skip_distance apart (1..max_skip_count + 1;
// unigrams counted once) are looked up in the pool (pool_int64s, n-grams of length n starting at
// ngram_counts[n - 1]); the i-th pool n-gram counts into Y[ngram_indexes[i]]. mode TF: counts; IDF:
// weights[o] (or 1) where the count is > 0; TFIDF: weights[o] * count (or the count). CPU only; no
// gradient.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class TfIdfVectorizerOp final : public Operator<CPUContext> {
 public:
  TfIdfVectorizerOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  int64_t min_n_, max_n_, max_skip_, out_size_ = 0;
  int mode_;  // 0 TF, 1 IDF, 2 TFIDF
  std::map<std::vector<int64_t>, int64_t> pool_;  // n-gram -> output index
  std::vector<float> weights_;
};

}  // namespace hetnet
