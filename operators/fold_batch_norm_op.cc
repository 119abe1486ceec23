#include "operators/fold_batch_norm_op.h"

#include <cmath>

#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/cast_ops.h"
#include "operators/elementwise_ops.h"

namespace hetnet {

namespace {
// The outputs' dtype: `to` (reduced-precision inference), float32 by default.
DataType FoldedType(const caffe2::OperatorDef& def) {
  const DataType to = ArgumentHelper(def).HasArgument("to") ? CastDataTypeArg(def, "to") : DataType::Float;
  HN_CHECK_KIND(kInvalidArgument, to == DataType::Float || to == DataType::BFloat16 || to == DataType::Float16,
                "FoldBatchNormWeights: `to` must be float32, bfloat16 or float16, got ", DataTypeName(to));
  return to;
}
}  // namespace

FoldBatchNormWeightsOp::FoldBatchNormWeightsOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      epsilon_(this->GetSingleArgument<float>("epsilon", 1e-5f)),
      axis_w_(this->GetSingleArgument<int>("axis_w", 1)),
      to_(FoldedType(def)) {}

bool FoldBatchNormWeightsOp::UpToDate() {
  if (inputs_seen_.size() != static_cast<size_t>(InputSize())) return false;
  for (int i = 0; i < InputSize(); ++i) {
    if (!inputs_seen_[i].Holds(Input(i))) return false;
  }
  for (int o = 0; o < 2; ++o) {
    const Blob* b = OutputBlob(o);
    if (!b->IsTensor() || !outputs_seen_[o].Same(TensorVersion::Of(b->GetTensor()))) return false;
  }
  return true;
}

void FoldBatchNormWeightsOp::RunOnDevice() {
  if (!UpToDate()) Fold();
}

void FoldBatchNormWeightsOp::Fold() {
  const Tensor& W = Input(0);
  // W may be narrow already (`to`'s dtype: a Predictor's weights converted in place).
  HN_ENFORCE((W.dtype() == DataType::Float || W.dtype() == to_) && W.ndim() >= 2, "FoldBatchNormWeights: W ('",
             def().input(0), "') must be a float32", to_ == DataType::Float ? std::string() : std::string(" or ") + DataTypeName(to_),
             " tensor of at least 2 dims, got ", DataTypeName(W.dtype()), " of ", W.ndim(), " dims");
  HN_ENFORCE(axis_w_ >= 1 && axis_w_ < W.ndim(), "FoldBatchNormWeights: axis_w ", axis_w_, " out of range for W of ",
             W.ndim(), " dims");
  const int64_t channels = W.size_to_dim(axis_w_);
  const float* stats[4];
  for (int k = 0; k < 4; ++k) {
    const Tensor& s = Input(k + 1);
    HN_ENFORCE(s.dtype() == DataType::Float && s.numel() == channels, "FoldBatchNormWeights: '", def().input(k + 1),
               "' must hold ", channels, " floats (one per output channel)");
    stats[k] = s.data<float>();
  }
  const float* bias = nullptr;
  if (InputSize() == 6) {
    const Tensor& B = Input(5);
    HN_ENFORCE(B.dtype() == DataType::Float && B.numel() == channels, "FoldBatchNormWeights: bias '",
               def().input(5), "' must hold ", channels, " floats");
    bias = B.data<float>();
  }
  const int64_t row = channels ? W.numel() / channels : 0;
  // float32 outputs are written in place; narrow ones (`to`) computed in float32, rounded once.
  const bool narrow = to_ != DataType::Float;
  // (Scratch freed after the fold: keeping it would keep the float32 copy.)
  Tensor w_scratch, b_scratch, widened;
  if (narrow) w_scratch = Tensor(W.shape(), DataType::Float), b_scratch = Tensor({channels}, DataType::Float);
  float* wd = (narrow ? &w_scratch : Output(0, W.shape(), DataType::Float))->mutable_data<float>();
  float* bd = (narrow ? &b_scratch : Output(1, {channels}, DataType::Float))->mutable_data<float>();
  if (W.dtype() != DataType::Float) widened = WidenToFloat(W);
  const float* src = (W.dtype() == DataType::Float ? W : widened).data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    const double alpha = stats[0][c] / std::sqrt(static_cast<double>(stats[3][c]) + epsilon_);
    for (int64_t k = 0; k < row; ++k) wd[c * row + k] = static_cast<float>(src[c * row + k] * alpha);
    bd[c] = static_cast<float>(((bias ? bias[c] : 0.0) - stats[2][c]) * alpha + stats[1][c]);
  }
  if (narrow) {
    NarrowFromFloat(w_scratch, Output(0, W.shape(), to_));
    NarrowFromFloat(b_scratch, Output(1, {channels}, to_));
  }
  inputs_seen_.clear();
  for (int i = 0; i < InputSize(); ++i) inputs_seen_.push_back(TensorVersion::Of(Input(i)));
  outputs_seen_ = {TensorVersion::Of(OutputBlob(0)->GetTensor()), TensorVersion::Of(OutputBlob(1)->GetTensor())};
}

OPERATOR_SCHEMA(FoldBatchNormWeights)
    .NumInputs(5, 6)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown(), TensorInfo::Unknown()};
      const int axis_w = ArgumentHelper(def).GetSingleArgument<int>("axis_w", 1);
      int64_t channels = 1;
      for (int d = 0; d < axis_w && d < static_cast<int>(in[0].dims.size()); ++d) channels *= in[0].dims[d];
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, FoldedType(def)), TensorInfo::Of({channels}, FoldedType(def))};
    })
    .SetDoc("Inference: the weights of a Conv/FC with the SpatialBN (is_test) after it folded in. Inputs "
            "(W, scale, shift, mean, var[, B]); outputs (W_folded, B_folded). Args: epsilon, axis_w. Folds "
            "again only when an input changed; inserted by the inference rewrite (core/inference_fusion.h). `to` "
            "(float32, bfloat16 or float16 TensorProto.DataType, for reduced-precision inference): the outputs' dtype.");
REGISTER_CPU_OPERATOR(FoldBatchNormWeights, FoldBatchNormWeightsOp);
NO_GRADIENT(FoldBatchNormWeights);

}  // namespace hetnet
