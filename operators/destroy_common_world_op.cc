#include "operators/destroy_common_world_op.h"

namespace hetnet {

OPERATOR_SCHEMA(DestroyCommonWorld).NumInputs(1).NumOutputs(1).InputsOnCPU({0}).OutputsOnCPU({0})
    .AllowInplace({{0, 0}}).EnforceInplace({{0, 0}})
    .SetDoc("Closes the common world's connections (in place); an empty blob is a no-op.");
REGISTER_CPU_OPERATOR(DestroyCommonWorld, NoDefaultEngineOp);

}  // namespace hetnet
