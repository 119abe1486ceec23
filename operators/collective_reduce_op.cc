#include "operators/collective_reduce_op.h"

namespace hetnet {

OPERATOR_SCHEMA(Reduce).NumInputs(2).NumOutputs(1).InputsOnCPU({0}).AllowInplace({{1, 0}})
    .SetDoc("Sums X over the ranks into Y of rank `root` (Y not set for other nodes). Needs an engine (GLOO).");
REGISTER_CPU_OPERATOR(Reduce, NoDefaultEngineOp);

}  // namespace hetnet
