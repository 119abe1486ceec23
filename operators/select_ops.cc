#include "operators/select_ops.h"

#include <cstring>

#include "core/argument.h"
#include "operators/cnn_op_utils.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {
void EnforceNotString(const OperatorBase& op, int i) {
  HN_ENFORCE(op.InputTensor(i).dtype() != DataType::String, op.type(), ": input ", i, " ('", op.def().input(i),
             "') is string (unsupported)");
}
}  // namespace

void NonZeroOp::RunOnDevice() {
  const Tensor& X = Input(0);
  std::vector<int64_t> hits;
  for (int64_t k = 0; k < X.numel(); ++k)
    if (ElementAsDouble(*this, X, 0, k) != 0) hits.push_back(k);
  const int rank = X.ndim();
  const int64_t count = static_cast<int64_t>(hits.size());
  Tensor* Y = Output(0, {rank, count}, DataType::Int64);
  int64_t* y = Y->mutable_data<int64_t>();
  for (int64_t j = 0; j < count; ++j) {
    int64_t rem = hits[j];
    for (int d = rank - 1; d >= 0; --d) {
      y[d * count + j] = rem % X.dim(d);
      rem /= X.dim(d);
    }
  }
}

void CompressOp::RunOnDevice() {
  const Tensor &X = Input(0), &C = Input(1);
  EnforceNotString(*this, 0);
  HN_ENFORCE(C.ndim() == 1, type(), ": condition (input 1, '", def().input(1), "') must be 1-D, but has shape ",
             C.ShapeString());
  const bool has_axis = ArgumentHelper(def()).HasArgument("axis");
  int axis = 0;
  int64_t outer = 1, n = X.numel(), inner = 1;
  if (has_axis) {
    HN_ENFORCE(X.ndim() >= 1, type(), ": input 0 ('", def().input(0), "') must have at least one dim with arg axis");
    axis = CanonicalAxisFor(def(), GetSingleArgument<int>("axis", 0), X.ndim(), 0);
    outer = ProdDims(X.shape(), 0, axis);
    n = X.dim(axis);
    inner = ProdDims(X.shape(), axis + 1, X.shape().size());
  }
  HN_ENFORCE(C.numel() <= n, type(), ": condition (input 1, '", def().input(1), "') has ", C.numel(),
             " entries but input 0 ('", def().input(0), "') has only ", n, has_axis ? " along the axis" : " elements");
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < C.numel(); ++k)
    if (ElementAsDouble(*this, C, 1, k) != 0) keep.push_back(k);
  std::vector<int64_t> shape = {static_cast<int64_t>(keep.size())};
  if (has_axis) {
    shape = X.shape();
    shape[axis] = static_cast<int64_t>(keep.size());
  }
  Tensor* Y = Output(0, shape, X.dtype());
  const size_t row = inner * X.itemsize();
  const char* x = static_cast<const char*>(X.raw_data());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < keep.size(); ++j)
      std::memcpy(y + (o * keep.size() + j) * row, x + (o * n + keep[j]) * row, row);
}

void ReverseSequenceOp::RunOnDevice() {
  const Tensor &X = Input(0), &L = Input(1);
  EnforceNotString(*this, 0);
  EnforceIndexInput(*this, 1);
  const int64_t batch_axis = GetSingleArgument<int64_t>("batch_axis", 1),
                time_axis = GetSingleArgument<int64_t>("time_axis", 0);
  HN_ENFORCE((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0), type(),
             ": args batch_axis (", batch_axis, ") and time_axis (", time_axis, ") must be 0 and 1 in some order");
  HN_ENFORCE(X.ndim() >= 2, type(), ": input 0 ('", def().input(0), "') must have at least 2 dims, but has shape ",
             X.ShapeString());
  const int64_t batch = X.dim(static_cast<int>(batch_axis)), steps = X.dim(static_cast<int>(time_axis));
  HN_ENFORCE(L.ndim() == 1 && L.numel() == batch, type(), ": sequence_lens (input 1, '", def().input(1),
             "') has shape ", L.ShapeString(), " but must be [", batch, "], one length per batch entry");
  const int64_t inner = ProdDims(X.shape(), 2, X.shape().size());
  const size_t row = inner * X.itemsize();
  Tensor* Y = Output(0, X.shape(), X.dtype());
  const char* x = static_cast<const char*>(X.raw_data());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = IndexAt(L, b);
    HN_ENFORCE(len >= 0 && len <= steps, type(), ": sequence_lens (input 1, '", def().input(1), "') holds ", len,
               " at ", b, ", outside [0, ", steps, "]");
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      auto at = [&](int64_t step) { return (time_axis == 0 ? step * batch + b : b * steps + step) * row; };
      std::memcpy(y + at(t), x + at(from), row);
    }
  }
}

OPERATOR_SCHEMA(NonZero).NumInputs(1).NumOutputs(1)
    .SetDoc("ONNX's NonZero(X) -> Y: int64 [rank, count], coordinates of X's nonzero elements in row-major order. "
            "CPU only.");
OPERATOR_SCHEMA(Compress).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's Compress(X, condition) -> Y: the slices of X along arg axis (or the elements of flattened X "
            "without it) where the 1-D condition is true; a shorter condition drops the rest. CPU only; no "
            "gradient.");
OPERATOR_SCHEMA(ReverseSequence).NumInputs(2).NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0].known ? TensorInfo::Of(in[0].dims, in[0].dtype) : TensorInfo::Unknown()};
    })
    .SetDoc("ONNX's ReverseSequence(X, sequence_lens) -> Y: per batch entry (arg batch_axis, default 1), the first "
            "sequence_lens[b] steps along arg time_axis (default 0) reversed. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(NonZero, NonZeroOp);
REGISTER_CPU_OPERATOR(Compress, CompressOp);
REGISTER_CPU_OPERATOR(ReverseSequence, ReverseSequenceOp);

}  // namespace hetnet
