#include "operators/nll_loss_op.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace hetnet {

namespace {
enum class Reduction { kNone, kSum, kMean };

Reduction ReductionOf(const caffe2::OperatorDef& def) {
  const std::string r = ArgumentHelper(def).GetSingleArgument<std::string>("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  HN_ENFORCE(r == "mean", def.type(), ": reduction '", r, "' is not one of none, sum, mean");
  return Reduction::kMean;
}

// Checks the shapes and dtypes; returns the loss shape (target's, or {} when reduced).
std::vector<int64_t> CheckInputs(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, DataType xt,
                                 const std::vector<int64_t>& t, DataType tt, const std::vector<int64_t>* w,
                                 DataType wt) {
  HN_ENFORCE(x.size() >= 2, def.type(), ": input 0 ('", def.input(0), "') must be (N, C, ...), has shape ",
             ShapeToString(x));
  HN_ENFORCE(xt == DataType::Float || xt == DataType::Double, def.type(), ": input 0 ('", def.input(0), "') is ",
             DataTypeName(xt), " but float32 or float64 is required");
  std::vector<int64_t> want{x[0]};
  want.insert(want.end(), x.begin() + 2, x.end());
  HN_ENFORCE(t == want, def.type(), ": input 1 ('", def.input(1), "') has shape ", ShapeToString(t), " but input 0 ('",
             def.input(0), "') of shape ", ShapeToString(x), " needs ", ShapeToString(want));
  HN_ENFORCE(tt == DataType::Int32 || tt == DataType::Int64, def.type(), ": input 1 ('", def.input(1), "') is ",
             DataTypeName(tt), " but int32 or int64 is required");
  if (w) {
    HN_ENFORCE(*w == std::vector<int64_t>{x[1]}, def.type(), ": input 2 ('", def.input(2), "') has shape ",
               ShapeToString(*w), " but one weight per class (", x[1], ") is required");
    HN_ENFORCE(wt == xt, def.type(), ": input 2 ('", def.input(2), "') is ", DataTypeName(wt), " but input 0 is ",
               DataTypeName(xt));
  }
  return ReductionOf(def) == Reduction::kNone ? t : std::vector<int64_t>{};
}

std::vector<TensorInfo> LossShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  std::vector<TensorInfo> out{TensorInfo::Of(
      CheckInputs(def, in[0].dims, in[0].dtype, in[1].dims, in[1].dtype, in.size() > 2 ? &in[2].dims : nullptr,
                  in.size() > 2 ? in[2].dtype : in[0].dtype),
      in[0].dtype)};
  if (def.output_size() > 1) out.push_back(TensorInfo::Of(in[0].dims, in[0].dtype));
  return out;
}

// log-softmax of x (N, C, D) along C into lp.
template <typename T>
void LogSoftmaxAxis1(const T* x, int64_t N, int64_t C, int64_t D, T* lp) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const T* xi = x + n * C * D + d;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < C; ++c) m = std::max(m, static_cast<double>(xi[c * D]));
      double s = 0;
      for (int64_t c = 0; c < C; ++c) s += std::exp(static_cast<double>(xi[c * D]) - m);
      const double lse = m + std::log(s);
      for (int64_t c = 0; c < C; ++c) lp[n * C * D + c * D + d] = static_cast<T>(static_cast<double>(xi[c * D]) - lse);
    }
}
}  // namespace

template <bool kSoftmax>
void OnnxClassLossOp<kSoftmax>::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& L = Input(1);
  const Tensor* W = InputSize() > 2 ? &Input(2) : nullptr;
  CheckInputs(def(), X.shape(), X.dtype(), L.shape(), L.dtype(), W ? &W->shape() : nullptr,
              W ? W->dtype() : X.dtype());
  if (X.dtype() == DataType::Double) Run<double>();
  else Run<float>();
}

template <bool kSoftmax>
template <typename T>
void OnnxClassLossOp<kSoftmax>::Run() {
  const Tensor& X = Input(0);
  const Tensor& L = Input(1);
  const T* w = InputSize() > 2 ? Input(2).template data<T>() : nullptr;
  const int64_t N = X.dim(0), C = X.dim(1), D = N * C > 0 ? X.numel() / (N * C) : 0;
  const bool has_ii = HasArgument("ignore_index");
  const int64_t ii = GetSingleArgument<int64_t>("ignore_index", 0);
  const Reduction red = ReductionOf(def());
  const T* lp = X.template data<T>();
  std::vector<T> scratch;
  if (kSoftmax) {
    T* out = nullptr;
    if (OutputSize() > 1) {
      out = Output(1, X.shape(), X.dtype())->template mutable_data<T>();
    } else {
      scratch.resize(X.numel());
      out = scratch.data();
    }
    LogSoftmaxAxis1(X.template data<T>(), N, C, D, out);
    lp = out;
  }
  std::vector<double> loss(N * D);
  double total = 0, total_w = 0;
  for (int64_t i = 0; i < N * D; ++i) {
    const int64_t t = L.dtype() == DataType::Int64 ? L.template data<int64_t>()[i] : L.template data<int32_t>()[i];
    if (has_ii && t == ii) {
      loss[i] = 0;
      continue;
    }
    HN_ENFORCE(t >= 0 && t < C, type(), ": input 1 ('", def().input(1), "') holds ", t, " at position ", i,
               ", outside [0, ", C, ")", has_ii ? " and not ignore_index " + std::to_string(ii) : std::string());
    const double wt = w ? static_cast<double>(w[t]) : 1.0;
    const int64_t n = i / D, d = i % D;
    loss[i] = -static_cast<double>(lp[(n * C + t) * D + d]) * wt;
    total += loss[i];
    total_w += wt;
  }
  if (red == Reduction::kNone) {
    T* y = Output(0, L.shape(), X.dtype())->template mutable_data<T>();
    for (int64_t i = 0; i < N * D; ++i) y[i] = static_cast<T>(loss[i]);
    return;
  }
  T* y = Output(0, {}, X.dtype())->template mutable_data<T>();
  y[0] = static_cast<T>(red == Reduction::kSum ? total : total / total_w);  // mean of nothing: NaN, as 0/0
}

OPERATOR_SCHEMA(NegativeLogLikelihoodLoss).NumInputs(2, 3).NumOutputs(1).TensorInference(LossShape)
    .SetDoc("ONNX NegativeLogLikelihoodLoss over class axis 1 (reduction none/sum/mean, ignore_index, weight).");
OPERATOR_SCHEMA(SoftmaxCrossEntropyLoss).NumInputs(2, 3).NumOutputs(1, 2).TensorInference(LossShape)
    .SetDoc("ONNX SoftmaxCrossEntropyLoss: NLL of the log-softmax along axis 1 (output 1, optional).");

REGISTER_CPU_OPERATOR(NegativeLogLikelihoodLoss, OnnxClassLossOp<false>);
REGISTER_CPU_OPERATOR(SoftmaxCrossEntropyLoss, OnnxClassLossOp<true>);

}  // namespace hetnet
