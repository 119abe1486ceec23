// Harness cases for TfIdfVectorizer (operators/tfidf_vectorizer_op.*). The reference scans the pool
// linearly for each candidate: every token once as a unigram, and for n >= 2 every start and gap
// d in 1..max_skip_count + 1 whose n tokens fit. The [tfidf] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

const std::vector<int64_t> kPool{2, 3, 5, 4, 5, 6, 7, 8, 6, 7};  // unigrams 2 3 5 4; bigrams 56 78 67
const std::vector<int64_t> kCounts{0, 4}, kIndexes{0, 1, 2, 3, 4, 5, 6};

caffe2::OperatorDef Tfidf(const std::string& mode, int64_t min_n, int64_t max_n, int64_t skip, bool weights) {
  std::vector<caffe2::Argument> args{Arg("mode", mode), Arg("min_gram_length", min_n), Arg("max_gram_length", max_n),
                                     Arg("max_skip_count", skip), Ints("pool_int64s", kPool),
                                     Ints("ngram_counts", kCounts), Ints("ngram_indexes", kIndexes)};
  if (weights) args.push_back(Floats("weights", {0.5f, 1.5f, 2.f, 0.25f, 3.f, 1.f, 0.75f}));
  return Op("TfIdfVectorizer", {"X"}, {"Y"}, args);
}

RefTensors TfidfRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  int64_t min_n = 0, max_n = 0, skip = 0;
  std::string mode;
  std::vector<float> w;
  for (const auto& a : def.arg()) {
    if (a.name() == "min_gram_length") min_n = a.i();
    if (a.name() == "max_gram_length") max_n = a.i();
    if (a.name() == "max_skip_count") skip = a.i();
    if (a.name() == "mode") mode = a.s();
    if (a.name() == "weights") w.assign(a.floats().begin(), a.floats().end());
  }
  const RefTensor& X = in[0];
  const bool batched = X.shape.size() == 2;
  const int64_t rows = batched ? X.dim(0) : 1, C = X.dim(-1), O = 7;
  // The pool's n-grams in order: 4 unigrams, then 3 bigrams.
  std::vector<std::vector<double>> grams;
  for (int i = 0; i < 4; ++i) grams.push_back({static_cast<double>(kPool[i])});
  for (int i = 4; i < 10; i += 2) grams.push_back({static_cast<double>(kPool[i]), static_cast<double>(kPool[i + 1])});
  RefTensor Y(batched ? std::vector<int64_t>{rows, O} : std::vector<int64_t>{O}, DataType::Float);
  auto count = [&](int64_t r, const std::vector<double>& cand) {
    for (size_t g = 0; g < grams.size(); ++g)
      if (grams[g] == cand) Y[r * O + kIndexes[g]] += 1;
  };
  for (int64_t r = 0; r < rows; ++r) {
    if (min_n <= 1)
      for (int64_t s = 0; s < C; ++s) count(r, {X[r * C + s]});
    for (int64_t n = std::max<int64_t>(2, min_n); n <= max_n; ++n)
      for (int64_t d = 1; d <= skip + 1; ++d)
        for (int64_t s = 0; s + (n - 1) * d < C; ++s) {
          std::vector<double> cand;
          for (int64_t k = 0; k < n; ++k) cand.push_back(X[r * C + s + k * d]);
          count(r, cand);
        }
  }
  for (int64_t k = 0; k < Y.numel(); ++k) {
    const double wk = w.empty() ? 1.0 : w[k % O];
    Y[k] = mode == "TF" ? Y[k] : mode == "IDF" ? (Y[k] > 0 ? wk : 0.0) : wk * Y[k];
  }
  return {Y};
}

}  // namespace

HN_OP_CASES(TfIdfVectorizer) {
  std::vector<Case> c = {
      Case("TF uni+bigrams skip 2, int64 [B, C]").Def(Tfidf("TF", 1, 2, 2, false))
          .Inputs({In({2, 9}, DataType::Int64).Range(2, 8)}).Ref(TfidfRef),
      Case("IDF bigrams only skip 0, weights, int32 [C]").Def(Tfidf("IDF", 2, 2, 0, true))
          .Inputs({In({12}, DataType::Int32).Range(4, 8)}).Ref(TfidfRef),
      Case("TFIDF uni+bigrams skip 5, weights").Def(Tfidf("TFIDF", 1, 2, 5, true))
          .Inputs({In({3, 8}, DataType::Int64).Range(2, 8)}).Ref(TfidfRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly().NoShapeCheck();
  return c;
}

TEST_CASE("TfIdfVectorizer refuses bad pools, modes and inputs, naming op and blob", "[tfidf]") {
  using optest::RunError;
  Tensor x({4}, DataType::Int64);
  std::memset(x.raw_mutable_data(DataType::Int64), 0, x.nbytes());
  Tensor f({4}, DataType::Float);
  std::memset(f.raw_mutable_data(DataType::Float), 0, f.nbytes());
  CHECK_THAT(RunError(Tfidf("BM25", 1, 2, 0, false), {x}), Catch::Contains("TfIdfVectorizer") && Catch::Contains("BM25"));
  CHECK_THAT(RunError(Tfidf("TF", 2, 1, 0, false), {x}), Catch::Contains("inconsistent"));
  CHECK_THAT(RunError(Tfidf("TF", 1, 2, 0, false), {f}), Catch::Contains("'X'") && Catch::Contains("float32"));
  auto bad = Tfidf("TF", 1, 2, 0, false);
  for (auto& a : *bad.mutable_arg())
    if (a.name() == "ngram_counts") a.set_ints(1, 5);  // bigrams from pool index 5: 5 entries, not pairs
  CHECK_THAT(RunError(bad, {x}), Catch::Contains("ngram_counts"));
}

}  // namespace harness
}  // namespace hetnet
