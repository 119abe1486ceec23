// Converter of ONNX's TfIdfVectorizer (opset 9) onto the CPU hetnet operator of the same name
// (operators/tfidf_vectorizer_op): integer pools only (pool_strings is refused). Registered from
// RegisterNnConverters.
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
}

}  // namespace hetnet::onnxio
