#include "operators/allreduce_op.h"

namespace hetnet {

OPERATOR_SCHEMA(Allreduce).NumInputs(2, 1 << 30).NumOutputs(1, 1 << 30).InputsOnCPU({0})
    .AllowInplace(ShiftedInplacePairs(1)).EnforceInplace(ShiftedInplacePairs(1))
    .SetDoc("Sums X1..Xn over the ranks of the common world, in place. Needs an engine (GLOO or NCCL).");
REGISTER_CPU_OPERATOR(Allreduce, NoDefaultEngineOp);

}  // namespace hetnet
