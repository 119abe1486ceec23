#include "operators/onnx_string_ops.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "core/checked_size.h"
#include "core/op_schema.h"
#include "device/broadcast.h"

namespace hetnet {

namespace {

void RequireStrings(const OperatorBase& op, int i) {
  const Tensor& t = op.InputTensor(i);
  HN_ENFORCE(t.dtype() == DataType::String, op.type(), ": input ", i, " ('", op.def().input(i), "') is ",
             DataTypeName(t.dtype()), "; a string tensor is required");
}

bool IsSpace(char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r') || (ch >= '\x1c' && ch <= '\x1f'); }

// Python's s.split(delimiter, maxsplit) (delimiter "": split(None, maxsplit)).
std::vector<std::string> Split(const std::string& s, const std::string& d, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (!d.empty()) {
    size_t at = 0;
    for (size_t hit; (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) &&
                     (hit = s.find(d, at)) != std::string::npos;
         at = hit + d.size())
      parts.push_back(s.substr(at, hit - at));
    parts.push_back(s.substr(at));
    return parts;
  }
  size_t i = 0;
  while (true) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {  // the rest as is (Python keeps its
      parts.push_back(s.substr(i));                                          // trailing whitespace)
      break;
    }
    const size_t b = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    parts.push_back(s.substr(b, i - b));
  }
  return parts;
}

std::string ChangeCase(std::string s, int action) {
  for (char& ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (action == 1) ch = static_cast<char>(std::tolower(u));
    if (action == 2) ch = static_cast<char>(std::toupper(u));
  }
  return s;
}

}  // namespace

void StringConcatOp::RunOnDevice() {
  RequireStrings(*this, 0);
  RequireStrings(*this, 1);
  const Tensor &X = Input(0), &Y = Input(1);
  std::vector<int64_t> out;
  HN_ENFORCE(math::NumpyBroadcastShape({X.sizes(), Y.sizes()}, &out), type(), ": X ('", def().input(0), "') ",
             X.ShapeString(), " and Y ('", def().input(1), "') ", Y.ShapeString(), " do not broadcast");
  const int64_t n = CheckedNumel(out, "StringConcat Z");
  std::string* z = Output(0, out, DataType::String)->mutable_data<std::string>();
  const std::string *x = X.data<std::string>(), *y = Y.data<std::string>();
  const int rank = static_cast<int>(out.size());
  for (int64_t e = 0; e < n; ++e) {
    int64_t rem = e, xi = 0, yi = 0, xs = 1, ys = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = rem % out[d];
      rem /= out[d];
      const int dx = d - (rank - X.ndim()), dy = d - (rank - Y.ndim());
      if (dx >= 0) xi += (X.dim(dx) == 1 ? 0 : i) * xs, xs *= X.dim(dx);
      if (dy >= 0) yi += (Y.dim(dy) == 1 ? 0 : i) * ys, ys *= Y.dim(dy);
    }
    z[e] = x[xi] + y[yi];
  }
}

void StringSplitOp::RunOnDevice() {
  RequireStrings(*this, 0);
  const Tensor& X = Input(0);
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(X.numel()));
  size_t most = 0;
  for (int64_t k = 0; k < X.numel(); ++k) {
    parts[k] = Split(X.data<std::string>()[k], delimiter_, maxsplit_);
    most = std::max(most, parts[k].size());
  }
  std::vector<int64_t> dims = X.sizes();
  dims.push_back(static_cast<int64_t>(most));
  CheckedNumel(dims, "StringSplit Y");
  std::string* y = Output(0, dims, DataType::String)->mutable_data<std::string>();
  int64_t* z = OutputSize() > 1 ? Output(1, X.sizes(), DataType::Int64)->mutable_data<int64_t>() : nullptr;
  for (int64_t k = 0; k < X.numel(); ++k) {
    for (size_t j = 0; j < most; ++j) y[k * static_cast<int64_t>(most) + j] = j < parts[k].size() ? parts[k][j] : "";
    if (z) z[k] = static_cast<int64_t>(parts[k].size());
  }
}

StringNormalizerOp::StringNormalizerOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), case_sensitive_(GetSingleArgument<int64_t>("is_case_sensitive", 0) != 0) {
  const std::string a = GetSingleArgument<std::string>("case_change_action", "NONE");
  HN_ENFORCE(a == "NONE" || a == "LOWER" || a == "UPPER", def.type(), ": case_change_action '", a,
             "'; NONE, LOWER or UPPER is required");
  action_ = a == "NONE" ? 0 : a == "LOWER" ? 1 : 2;
  for (const auto& w : GetRepeatedArgument<std::string>("stopwords")) stops_.insert(case_sensitive_ ? w : ChangeCase(w, action_));
}

void StringNormalizerOp::RunOnDevice() {
  RequireStrings(*this, 0);
  const Tensor& X = Input(0);
  HN_ENFORCE(X.ndim() == 1 || (X.ndim() == 2 && X.dim(0) == 1), type(), ": X ('", def().input(0), "') has shape ",
             X.ShapeString(), "; [C] or [1, C] is required");
  auto drop_stops = [&](const std::string& s) {
    if (stops_.empty()) return s;
    std::string out;
    bool first = true;
    for (size_t b = 0;;) {  // words split on single spaces, as Python's s.split(" ")
      const size_t e = std::min(s.find(' ', b), s.size());
      const std::string w = s.substr(b, e - b);
      if (!stops_.count(w)) out += (first ? "" : " ") + w, first = false;
      if (e == s.size()) break;
      b = e + 1;
    }
    return out;
  };
  std::vector<std::string> kept;
  for (int64_t k = 0; k < X.numel(); ++k) {
    std::string s = X.data<std::string>()[k];
    if (case_sensitive_) s = drop_stops(s);
    s = ChangeCase(s, action_);
    if (!case_sensitive_) s = drop_stops(s);
    if (!s.empty()) kept.push_back(s);
  }
  if (kept.empty()) kept.push_back("");
  const int64_t c = static_cast<int64_t>(kept.size());
  std::string* y = Output(0, X.ndim() == 1 ? std::vector<int64_t>{c} : std::vector<int64_t>{1, c}, DataType::String)
                       ->mutable_data<std::string>();
  std::copy(kept.begin(), kept.end(), y);
}

RegexFullMatchOp::RegexFullMatchOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
  const std::string pattern = GetSingleArgument<std::string>("pattern", "");
  try {
    re_ = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    HN_THROW(kInvalidArgument, def.type(), ": pattern '", pattern, "' does not compile as an ECMAScript regex: ",
             e.what());
  }
}

void RegexFullMatchOp::RunOnDevice() {
  RequireStrings(*this, 0);
  const Tensor& X = Input(0);
  bool* y = Output(0, X.sizes(), DataType::Bool)->mutable_data<bool>();
  for (int64_t k = 0; k < X.numel(); ++k) y[k] = std::regex_match(X.data<std::string>()[k], re_);
}

OPERATOR_SCHEMA(StringConcat).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's StringConcat: elementwise X + Y of string tensors, numpy broadcasting. CPU only.");
OPERATOR_SCHEMA(StringSplit).NumInputs(1).NumOutputs(1, 2)
    .SetDoc("ONNX's StringSplit: Python-style split by delimiter (or whitespace) with maxsplit; parts padded with \"\" "
            "and int64 counts. CPU only.");
OPERATOR_SCHEMA(StringNormalizer).NumInputs(1).NumOutputs(1)
    .SetDoc("ONNX's StringNormalizer: stopword removal and ASCII case change of [C] / [1, C] strings, empty results "
            "removed. CPU only.");
REGISTER_CPU_OPERATOR(StringConcat, StringConcatOp);
REGISTER_CPU_OPERATOR(StringSplit, StringSplitOp);
OPERATOR_SCHEMA(RegexFullMatch).NumInputs(1).NumOutputs(1)
    .SetDoc("ONNX's RegexFullMatch: whether each string fully matches arg pattern (an ECMAScript regex). CPU only.");
REGISTER_CPU_OPERATOR(StringNormalizer, StringNormalizerOp);
REGISTER_CPU_OPERATOR(RegexFullMatch, RegexFullMatchOp);

}  // namespace hetnet
