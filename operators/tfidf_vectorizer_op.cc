#include "operators/tfidf_vectorizer_op.h"

#include <algorithm>

#include "core/op_schema.h"

namespace hetnet {

TfIdfVectorizerOp::TfIdfVectorizerOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      min_n_(GetSingleArgument<int64_t>("min_gram_length", 0)),
      max_n_(GetSingleArgument<int64_t>("max_gram_length", 0)),
      max_skip_(GetSingleArgument<int64_t>("max_skip_count", 0)),
      weights_(GetRepeatedArgument<float>("weights")) {
  const std::string mode = GetSingleArgument<std::string>("mode", "");
  HN_ENFORCE(mode == "TF" || mode == "IDF" || mode == "TFIDF", def.type(), ": mode '", mode, "'; TF, IDF or TFIDF");
  mode_ = mode == "TF" ? 0 : mode == "IDF" ? 1 : 2;
  HN_ENFORCE(min_n_ >= 1 && max_n_ >= min_n_ && max_skip_ >= 0, def.type(), ": min_gram_length ", min_n_,
             ", max_gram_length ", max_n_, ", max_skip_count ", max_skip_, " are inconsistent");
  const std::vector<int64_t> pool = GetRepeatedArgument<int64_t>("pool_int64s");
  const std::vector<int64_t> counts = GetRepeatedArgument<int64_t>("ngram_counts");
  const std::vector<int64_t> indexes = GetRepeatedArgument<int64_t>("ngram_indexes");
  HN_ENFORCE(!indexes.empty(), def.type(), ": ngram_indexes is required");
  for (int64_t v : indexes) HN_ENFORCE(v >= 0, def.type(), ": ngram_indexes holds ", v);
  out_size_ = *std::max_element(indexes.begin(), indexes.end()) + 1;
  HN_ENFORCE(weights_.empty() || static_cast<int64_t>(weights_.size()) == out_size_, def.type(), ": ", weights_.size(),
             " weights for ", out_size_, " outputs");
  size_t id = 0;
  for (size_t n = 0; n < counts.size(); ++n) {
    const int64_t begin = counts[n], end = n + 1 < counts.size() ? counts[n + 1] : static_cast<int64_t>(pool.size());
    HN_ENFORCE(begin >= 0 && begin <= end && end <= static_cast<int64_t>(pool.size()) &&
                   (end - begin) % static_cast<int64_t>(n + 1) == 0,
               def.type(), ": ngram_counts ", begin, "..", end, " for ", n + 1, "-grams does not fit pool_int64s of ",
               pool.size());
    for (int64_t p = begin; p < end; p += static_cast<int64_t>(n + 1), ++id) {
      HN_ENFORCE(id < indexes.size(), def.type(), ": the pool has more n-grams than ngram_indexes (", indexes.size(), ")");
      pool_.emplace(std::vector<int64_t>(pool.begin() + p, pool.begin() + p + static_cast<int64_t>(n + 1)), indexes[id]);
    }
  }
}

void TfIdfVectorizerOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE((X.dtype() == DataType::Int32 || X.dtype() == DataType::Int64) && X.ndim() >= 1 && X.ndim() <= 2, type(),
             ": X ('", def().input(0), "') is ", DataTypeName(X.dtype()), " ", X.ShapeString(),
             "; int32/int64 [C] or [B, C] is required (string tokens are not supported)");
  const bool batched = X.ndim() == 2;
  const int64_t rows = batched ? X.dim(0) : 1, C = X.dim(batched ? 1 : 0);
  auto token = [&](int64_t k) { return X.dtype() == DataType::Int32 ? X.data<int32_t>()[k] : X.data<int64_t>()[k]; };
  std::vector<double> counts(static_cast<size_t>(rows * out_size_), 0.0);
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t skip = 1; skip <= max_skip_ + 1; ++skip) {
      const int64_t lo = skip == 1 ? min_n_ : std::max<int64_t>(min_n_, 2);  // unigrams once, not per skip
      for (int64_t start = 0; start < C; ++start) {
        gram.clear();
        for (int64_t n = 1, at = start; n <= max_n_ && at < C; ++n, at += skip) {
          gram.push_back(token(r * C + at));
          if (n < lo) continue;
          auto it = pool_.find(gram);
          if (it != pool_.end()) counts[r * out_size_ + it->second] += 1;
        }
      }
    }
  std::vector<int64_t> dims = batched ? std::vector<int64_t>{rows, out_size_} : std::vector<int64_t>{out_size_};
  float* y = Output(0, dims, DataType::Float)->mutable_data<float>();
  for (int64_t k = 0; k < rows * out_size_; ++k) {
    const double f = counts[k], w = weights_.empty() ? 1.0 : weights_[k % out_size_];
    y[k] = static_cast<float>(mode_ == 0 ? f : mode_ == 1 ? (f > 0 ? w : 0.0) : w * f);
  }
}

OPERATOR_SCHEMA(TfIdfVectorizer).NumInputs(1).NumOutputs(1)
    .SetDoc("ONNX's TfIdfVectorizer on int32/int64 tokens: skip-gram counts of the pool's n-grams, TF / IDF / TFIDF "
            "weighting, float32 output. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(TfIdfVectorizer, TfIdfVectorizerOp);

}  // namespace hetnet
