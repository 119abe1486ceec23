#include "operators/iter_op.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(Iter).NumInputs(0, 1).NumOutputs(1).EnforceInplace({{0, 0}}).InputsOnCPU({0}).OutputsOnCPU({0})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>&) {
      return std::vector<TensorInfo>{TensorInfo::Of({1}, DataType::Int64)};
    })
    .SetDoc("iter += 1 in place (int64 [1], always on CPU).");
REGISTER_CPU_OPERATOR(Iter, IterOp<CPUContext>);
NO_GRADIENT(Iter);

}  // namespace hetnet
