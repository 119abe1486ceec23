#include "operators/clone_common_world_op.h"

namespace hetnet {

OPERATOR_SCHEMA(CloneCommonWorld).NumInputs(1).NumOutputs(1).InputsOnCPU({0}).OutputsOnCPU({0})
    .SetDoc("A new common world with the ranks of the existing one, connected over its pairs (no store).");
REGISTER_CPU_OPERATOR(CloneCommonWorld, NoDefaultEngineOp);

}  // namespace hetnet
