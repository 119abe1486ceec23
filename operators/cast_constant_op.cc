#include "operators/cast_constant_op.h"

#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/cast_ops.h"

namespace hetnet {

OPERATOR_SCHEMA(CastConstant)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, CastDataTypeArg(def, "to"))};
    })
    .SetDoc("Y = X converted to dtype `to` (as Cast), again only when X changed: weights converted for "
            "reduced-precision inference (core/reduced_precision.h).");
REGISTER_CPU_OPERATOR(CastConstant, CastConstantOp<CPUContext>);
NO_GRADIENT(CastConstant);

}  // namespace hetnet
