// Converters of ONNX's text ops onto the CPU hetnet operators of the same names: TfIdfVectorizer
// (opset 9; operators/tfidf_vectorizer_op: integer pools only, pool_strings is refused),
// StringConcat, StringSplit, StringNormalizer, RegexFullMatch (operators/onnx_string_ops).
// Registered from RegisterNnConverters.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

void RegisterTextConverters(ConverterRegistry& r) {
  r.Add("TfIdfVectorizer", 9, kNewestOpset, [](ConvertContext& c) {
    if (c.Has("pool_strings")) c.Refuse("pool_strings (string tokens) is not supported");
    auto& op = c.Emit("TfIdfVectorizer", {c.in(0)}, {c.out(0)});
    for (const char* a : {"min_gram_length", "max_gram_length", "max_skip_count"}) AddArg(op, a, c.Int(a, 0));
    AddArg(op, "mode", c.Str("mode", ""));
    for (const char* a : {"pool_int64s", "ngram_counts", "ngram_indexes"})
      if (c.Has(a)) AddArg(op, a, c.Ints(a));
    if (c.Has("weights")) {
      auto& arg = *op.add_arg();
      arg.set_name("weights");
      for (float w : c.Floats("weights")) arg.add_floats(w);
    }
    if (c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), c.Rank(c.in(0)));
  });
  r.Add("StringConcat", 20, kNewestOpset, [](ConvertContext& c) { c.Emit("StringConcat", {c.in(0), c.in(1)}, {c.out(0)}); });
  r.Add("StringSplit", 20, kNewestOpset, [](ConvertContext& c) {
    std::vector<std::string> outs{c.has_out(0) ? c.out(0) : c.Fresh("string_split_unused")};
    if (c.has_out(1)) outs.push_back(c.out(1));
    auto& op = c.Emit("StringSplit", {c.in(0)}, outs);
    if (c.Has("delimiter")) AddArg(op, "delimiter", c.Str("delimiter", ""));
    if (c.Has("maxsplit")) AddArg(op, "maxsplit", c.Int("maxsplit", -1));
  });
  r.Add("RegexFullMatch", 20, kNewestOpset, [](ConvertContext& c) {
    AddArg(c.Emit("RegexFullMatch", {c.in(0)}, {c.out(0)}), "pattern", c.Str("pattern", ""));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("StringNormalizer", 10, kNewestOpset, [](ConvertContext& c) {
    auto& op = c.Emit("StringNormalizer", {c.in(0)}, {c.out(0)});
    AddArg(op, "case_change_action", c.Str("case_change_action", "NONE"));
    AddArg(op, "is_case_sensitive", c.Int("is_case_sensitive", 0));
    if (c.Has("stopwords")) {
      auto& arg = *op.add_arg();
      arg.set_name("stopwords");
      for (const auto& w : c.Attr("stopwords")->strings()) arg.add_strings(w);
    }
  });
}

}  // namespace hetnet::onnxio
