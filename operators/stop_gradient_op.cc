#include "operators/stop_gradient_op.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(StopGradient).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = X; no gradient flows back through it (autodiff stops here).");
REGISTER_CPU_OPERATOR(StopGradient, StopGradientOp<CPUContext>);
NO_GRADIENT(StopGradient);

}  // namespace hetnet
