#include "operators/einsum_op.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "core/checked_size.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

constexpr int kEllipsisBase = 1000;  // label ids of "..." dims: kEllipsisBase + position from the right

struct Term {
  std::vector<int> labels;  // per dim
};

// One term's labels for a tensor of `rank` dims ("..." covers the dims the letters leave).
Term ParseTerm(const OperatorBase& op, const std::string& t, int64_t rank, int* ellipsis_rank) {
  Term term;
  const size_t dots = t.find("...");
  int letters = 0;
  for (char ch : t)
    if (ch != '.') {
      HN_ENFORCE(std::isalpha(static_cast<unsigned char>(ch)), op.type(), ": equation term '", t,
                 "' has '", ch, "'; labels are letters");
      ++letters;
    }
  HN_ENFORCE(dots == std::string::npos ? static_cast<int64_t>(t.size()) == letters
                                       : static_cast<int64_t>(t.size()) == letters + 3 &&
                                             t.find("...", dots + 1) == std::string::npos,
             op.type(), ": equation term '", t, "' has stray dots");
  const int64_t covered = dots == std::string::npos ? 0 : rank - letters;
  HN_ENFORCE(rank < 0 || (dots == std::string::npos ? rank == letters : covered >= 0), op.type(), ": equation term '",
             t, "' does not fit an input of ", rank, " dims");
  for (size_t i = 0; i < t.size(); ++i) {
    if (i == dots) {
      for (int64_t k = covered; k > 0; --k) term.labels.push_back(kEllipsisBase + static_cast<int>(k) - 1);
      *ellipsis_rank = std::max(*ellipsis_rank, static_cast<int>(covered));
      i += 2;
    } else {
      term.labels.push_back(t[i]);
    }
  }
  return term;
}

}  // namespace

EinsumOp::EinsumOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), equation_(GetSingleArgument<std::string>("equation", "")) {
  equation_.erase(std::remove(equation_.begin(), equation_.end(), ' '), equation_.end());
  HN_ENFORCE(!equation_.empty(), def.type(), ": arg equation is required");
}

void EinsumOp::RunOnDevice() {
  const size_t arrow = equation_.find("->");
  const std::string lhs = equation_.substr(0, arrow);
  std::vector<std::string> parts;
  for (size_t b = 0, e; b <= lhs.size(); b = e + 1) {
    e = lhs.find(',', b);
    if (e == std::string::npos) e = lhs.size();
    parts.push_back(lhs.substr(b, e - b));
  }
  HN_ENFORCE(static_cast<int>(parts.size()) == InputSize(), type(), ": equation '", equation_, "' has ", parts.size(),
             " input terms for ", InputSize(), " inputs");
  const DataType t = Input(0).dtype();
  const bool sixteen = t == DataType::Float16 || t == DataType::BFloat16;  // summed in double, rounded once
  HN_ENFORCE(sixteen || t == DataType::Float || t == DataType::Double || t == DataType::Int32 || t == DataType::Int64,
             type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(t),
             "; float16, bfloat16, float32/64 or int32/64 is required");
  int ellipsis_rank = 0;
  std::vector<Term> terms;
  std::map<int, int64_t> size;  // label -> size (1 for a "..." dim no input stretches)
  std::map<int, int> count;     // label -> uses across the inputs
  for (int i = 0; i < InputSize(); ++i) {
    const Tensor& X = Input(i);
    HN_ENFORCE(X.dtype() == t, type(), ": input ", i, " ('", def().input(i), "') is ", DataTypeName(X.dtype()),
               " but input 0 is ", DataTypeName(t), "; all inputs must have one dtype");
    terms.push_back(ParseTerm(*this, parts[i], X.ndim(), &ellipsis_rank));
    for (int d = 0; d < X.ndim(); ++d) {
      const int l = terms.back().labels[d];
      const int64_t n = X.dim(d);
      ++count[l];
      auto it = size.find(l);
      if (it == size.end() || it->second == 1) size[l] = n;
      else
        HN_ENFORCE(n == it->second || (l >= kEllipsisBase && n == 1), type(), ": label '",
                   l >= kEllipsisBase ? std::string("...") : std::string(1, static_cast<char>(l)), "' has size ", n,
                   " in input ", i, " ('", def().input(i), "') but ", it->second, " elsewhere");
    }
  }
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    int dummy = 0;
    out_labels = ParseTerm(*this, equation_.substr(arrow + 2), -1, &dummy).labels;
    // "..." in the output: ParseTerm gave no dims for it (rank unknown); put the broadcast dims there.
    const size_t dots = equation_.find("...", arrow);
    if (dots != std::string::npos) {
      const size_t at = dots - (arrow + 2);
      std::vector<int> e;
      for (int k = ellipsis_rank; k > 0; --k) e.push_back(kEllipsisBase + k - 1);
      out_labels.insert(out_labels.begin() + static_cast<std::ptrdiff_t>(at), e.begin(), e.end());
    }
    for (int l : out_labels)
      HN_ENFORCE(size.count(l), type(), ": output label '", static_cast<char>(l), "' of '", equation_,
                 "' is in no input term");
  } else {
    for (int k = ellipsis_rank; k > 0; --k) out_labels.push_back(kEllipsisBase + k - 1);
    for (const auto& [l, n] : count)
      if (l < kEllipsisBase && n == 1) out_labels.push_back(l);
  }
  std::vector<int> all = out_labels;  // output labels outermost, then the summed ones
  for (const auto& kv : size)
    if (std::find(all.begin(), all.end(), kv.first) == all.end()) all.push_back(kv.first);
  std::vector<int64_t> dims, out_shape;
  for (int l : all) dims.push_back(size[l]);
  for (int l : out_labels) out_shape.push_back(size[l]);
  const int64_t steps = CheckedNumel(dims, "Einsum loop");
  HN_ENFORCE(steps <= (int64_t{1} << 32), type(), ": equation '", equation_, "' over these shapes needs ", steps,
             " steps (more than 2^32)");
  Tensor* Y = Output(0, out_shape, t);
  const int64_t out_n = Y->numel(), inner = out_n == 0 ? 0 : steps / out_n;
  // Per input, the element stride of each label (a label repeated in a term adds its strides: diagonal).
  std::vector<std::vector<int64_t>> strides(InputSize(), std::vector<int64_t>(all.size(), 0));
  for (int i = 0; i < InputSize(); ++i) {
    int64_t s = 1;
    for (int d = Input(i).ndim() - 1; d >= 0; --d) {
      const int l = terms[i].labels[d];
      const size_t pos = std::find(all.begin(), all.end(), l) - all.begin();
      if (Input(i).dim(d) != 1 || size[l] == 1) strides[i][pos] += s;
      s *= Input(i).dim(d);
    }
  }
  std::vector<double> acc(out_n, 0.0);
  std::vector<int64_t> coord(all.size());
  for (int64_t step = 0; step < steps; ++step) {
    for (int64_t rem = step, j = static_cast<int64_t>(all.size()) - 1; j >= 0; --j) coord[j] = rem % dims[j], rem /= dims[j];
    double prod = 1.0;
    for (int i = 0; i < InputSize(); ++i) {
      int64_t off = 0;
      for (size_t j = 0; j < all.size(); ++j) off += coord[j] * strides[i][j];
      prod *= ElementAsDouble(*this, Input(i), i, off);
    }
    acc[step / inner] += prod;
  }
  if (sixteen) {
    char* y = static_cast<char*>(Y->raw_mutable_data(t));
    for (int64_t k = 0; k < out_n; ++k) EncodeAs(*this, t, acc[k], y + k * Y->itemsize());
    return;
  }
  DispatchArithmetic(*this, t, 0, [&](auto zero) {
    using T = decltype(zero);
    T* y = Y->template mutable_data<T>();
    for (int64_t k = 0; k < out_n; ++k) y[k] = static_cast<T>(acc[k]);
  });
}

void DetOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() == DataType::Float || X.dtype() == DataType::Double, type(), ": input 0 ('", def().input(0),
             "') is ", DataTypeName(X.dtype()), "; float32 or float64 is required");
  HN_ENFORCE(X.ndim() >= 2 && X.dim(-1) == X.dim(-2), type(), ": input 0 ('", def().input(0), "') has shape ",
             X.ShapeString(), "; [..., M, M] is required");
  const int64_t m = X.dim(-1);
  std::vector<int64_t> shape(X.shape().begin(), X.shape().end() - 2);
  Tensor* Y = Output(0, shape, X.dtype());
  std::vector<double> a(m * m);
  for (int64_t b = 0; b < Y->numel(); ++b) {
    for (int64_t k = 0; k < m * m; ++k) a[k] = ElementAsDouble(*this, X, 0, b * m * m + k);
    double det = 1.0;
    for (int64_t col = 0; col < m && det != 0; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::fabs(a[r * m + col]) > std::fabs(a[pivot * m + col])) pivot = r;
      if (a[pivot * m + col] == 0) {
        det = 0;
        break;
      }
      if (pivot != col) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[pivot * m + j], a[col * m + j]);
        det = -det;
      }
      det *= a[col * m + col];
      for (int64_t r = col + 1; r < m; ++r) {
        const double f = a[r * m + col] / a[col * m + col];
        for (int64_t j = col; j < m; ++j) a[r * m + j] -= f * a[col * m + j];
      }
    }
    if (X.dtype() == DataType::Float) Y->mutable_data<float>()[b] = static_cast<float>(det);
    else Y->mutable_data<double>()[b] = det;
  }
}

OPERATOR_SCHEMA(Det).NumInputs(1).NumOutputs(1)
    .SetDoc("ONNX's Det(X) -> Y: determinants of the trailing square matrices, float32/64, by partial-pivoting "
            "elimination in float64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(Det, DetOp);

OPERATOR_SCHEMA(Einsum).NumInputs(1, 16).NumOutputs(1)
    .SetDoc("ONNX's Einsum with arg equation (explicit or implicit output, '...', diagonals); inputs of one dtype "
            "(float16, bfloat16, float32/64, int32/64), summed in float64 by a plain loop (at most 2^32 steps). CPU only; "
            "no gradient.");
REGISTER_CPU_OPERATOR(Einsum, EinsumOp);

}  // namespace hetnet
