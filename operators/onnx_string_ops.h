// ONNX's string operators on hetnet string tensors (CPU only; no gradient):
//
// StringConcat(X, Y) -> Z: elementwise X + Y with numpy broadcasting (opset 20).
//
// StringSplit(X) -> Y, Z: each string split (opset 20) like Python's str.split: by arg delimiter
// (consecutive delimiters give empty parts), or with no / an empty delimiter on runs of whitespace
// (leading and trailing whitespace dropped); at most maxsplit splits (absent or negative: no limit;
// the unsplit rest keeps its trailing whitespace, as Python's).
// Y [X dims..., M] holds the parts padded with "" to the most parts M; Z (int64, X's dims) the counts.
//
// StringNormalizer(X) -> Y (opset 10): X [C] or [1, C]; words (split on ' ') in stopwords are
// dropped (is_case_sensitive=0: compared after the case change, to the case-changed stopwords),
// case_change_action LOWER / UPPER / NONE changes ASCII letters; elements left empty are removed (an
// all-empty result is one ""). locale is accepted and not used (ASCII case rules).
//
// RegexFullMatch(X) -> Y (opset 20): bool, whether each whole string matches arg pattern. The pattern
// is compiled as an ECMAScript regex (std::regex), not RE2: the common syntax (classes, \w \b,
// groups, alternation, counted repeats) agrees; RE2-only syntax is refused with the compile error.
#pragma once

#include <regex>
#include <set>
#include <string>

#include "core/operator.h"

namespace hetnet {

class StringConcatOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class StringSplitOp final : public Operator<CPUContext> {
 public:
  StringSplitOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        delimiter_(GetSingleArgument<std::string>("delimiter", "")),
        maxsplit_(GetSingleArgument<int64_t>("maxsplit", -1)) {}
  void RunOnDevice() override;

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

class StringNormalizerOp final : public Operator<CPUContext> {
 public:
  StringNormalizerOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  int action_;  // 0 NONE, 1 LOWER, 2 UPPER
  bool case_sensitive_;
  std::set<std::string> stops_;  // case-changed unless case-sensitive
};

class RegexFullMatchOp final : public Operator<CPUContext> {
 public:
  RegexFullMatchOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::regex re_;
};

}  // namespace hetnet
