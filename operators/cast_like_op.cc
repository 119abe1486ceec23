#include "operators/cast_like_op.h"

namespace hetnet {

OPERATOR_SCHEMA(CastLike)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      if (!in[0].known || !in[1].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, in[1].dtype)};
    })
    .SetDoc("CastLike(X, like) -> Y: X converted to like's dtype (as Cast converts); like's values are unused.");
REGISTER_CPU_OPERATOR(CastLike, CastLikeOp<CPUContext>);

}  // namespace hetnet
