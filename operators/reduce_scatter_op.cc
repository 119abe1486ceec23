#include "operators/reduce_scatter_op.h"

namespace hetnet {

OPERATOR_SCHEMA(ReduceScatter).NumInputs(2, 1 << 30).NumOutputs(1, 1 << 30).InputsOnCPU({0})
    .AllowInplace(ShiftedInplacePairs(1)).EnforceInplace(ShiftedInplacePairs(1))
    .SetDoc("Sums X1..Xn over the ranks, leaving rank r its recvCounts[r] segment, in place. Needs an engine.");
REGISTER_CPU_OPERATOR(ReduceScatter, NoDefaultEngineOp);

}  // namespace hetnet
