#include "operators/weighted_sum_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void WeightedAxpyKernel<CPUContext>(int64_t n, const float* w, const float* x, float* y, bool accumulate,
                                    CPUContext*) {
  const float a = w[0];
  for (int64_t i = 0; i < n; ++i) WeightedAxpyElement(i, a, x, y, accumulate);
}

OPERATOR_SCHEMA(WeightedSum).NumInputs(2, 1 << 30).NumOutputs(1).AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = sum_i w_i * X_i for inputs X0, w0, X1, w1, ... (w_i one float each); Y may be X0.");
REGISTER_CPU_OPERATOR(WeightedSum, WeightedSumOp<CPUContext>);
// No gradient maker: a WeightedSum on the path from a loss is an error, not a silent zero.

}  // namespace hetnet
