#include "operators/barrier_op.h"

namespace hetnet {

OPERATOR_SCHEMA(Barrier).NumInputs(1).NumOutputs(0).InputsOnCPU({0})
    .SetDoc("Waits until every rank of the common world reached it.");
REGISTER_CPU_OPERATOR(Barrier, NoDefaultEngineOp);

}  // namespace hetnet
