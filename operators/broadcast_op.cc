#include "operators/broadcast_op.h"

namespace hetnet {

OPERATOR_SCHEMA(Broadcast).NumInputs(2, 1 << 30).NumOutputs(1, 1 << 30).InputsOnCPU({0})
    .AllowInplace(ShiftedInplacePairs(1)).EnforceInplace(ShiftedInplacePairs(1))
    .SetDoc("Copies X1 of rank `root` into X1..Xn of every rank, in place. Needs an engine (GLOO or NCCL).");
REGISTER_CPU_OPERATOR(Broadcast, NoDefaultEngineOp);

}  // namespace hetnet
