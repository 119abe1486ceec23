#include "operators/fold_batch_norm_op.h"

#include <cmath>

#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/cast_ops.h"

namespace hetnet {

DataType FoldedBatchNormType(const caffe2::OperatorDef& def) {
  const DataType to = ArgumentHelper(def).HasArgument("to") ? CastDataTypeArg(def, "to") : DataType::Float;
  HN_CHECK_KIND(kInvalidArgument, to == DataType::Float || to == DataType::BFloat16 || to == DataType::Float16,
                "FoldBatchNormWeights: `to` must be float32, bfloat16 or float16, got ", DataTypeName(to));
  return to;
}

PreparedWeightCache<FoldArguments, FoldedWeights>& SharedFolds() {
  // Without a byte count: the folded tensors are blobs of the workspaces too, reported there.
  static auto* c = new PreparedWeightCache<FoldArguments, FoldedWeights>();  // outlives every op
  return *c;
}

template <>
void FoldBatchNormKernel<CPUContext>(int64_t channels, int64_t row, const float* src, const float* const stats[4],
                                     const float* bias, double epsilon, float* wd, float* bd, CPUContext*) {
  for (int64_t c = 0; c < channels; ++c) {
    const double alpha = stats[0][c] / std::sqrt(static_cast<double>(stats[3][c]) + epsilon);
    for (int64_t k = 0; k < row; ++k) wd[c * row + k] = static_cast<float>(src[c * row + k] * alpha);
    bd[c] = static_cast<float>(((bias ? bias[c] : 0.0) - stats[2][c]) * alpha + stats[1][c]);
  }
}

OPERATOR_SCHEMA(FoldBatchNormWeights)
    .NumInputs(5, 6)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown(), TensorInfo::Unknown()};
      const int axis_w = ArgumentHelper(def).GetSingleArgument<int>("axis_w", 1);
      int64_t channels = 1;
      for (int d = 0; d < axis_w && d < static_cast<int>(in[0].dims.size()); ++d) channels *= in[0].dims[d];
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, FoldedBatchNormType(def)), TensorInfo::Of({channels}, FoldedBatchNormType(def))};
    })
    .SetDoc("Inference: the weights of a Conv/FC with the SpatialBN (is_test) after it folded in. Inputs "
            "(W, scale, shift, mean, var[, B]); outputs (W_folded, B_folded). Args: epsilon, axis_w. Folds "
            "again only when an input changed; inserted by the inference rewrite (core/inference_fusion.h). `to` "
            "(float32, bfloat16 or float16 TensorProto.DataType, for reduced-precision inference): the outputs' dtype.");
REGISTER_CPU_OPERATOR(FoldBatchNormWeights, FoldBatchNormWeightsOp<CPUContext>);
NO_GRADIENT(FoldBatchNormWeights);

}  // namespace hetnet
