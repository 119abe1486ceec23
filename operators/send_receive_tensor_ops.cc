#include "operators/send_receive_tensor_ops.h"

namespace hetnet {

OPERATOR_SCHEMA(SendTensor).NumInputs(2, 4).NumOutputs(0).InputsOnCPU({0})
    .SetDoc("Sends X to rank dst (schema only: no engine implements it).");
OPERATOR_SCHEMA(ReceiveTensor).NumInputs(2, 4).NumOutputs(3).InputsOnCPU({0})
    .AllowInplace({{1, 0}, {2, 1}, {3, 2}}).EnforceInplace({{1, 0}})
    .SetDoc("Receives Y from rank src (schema only: no engine implements it).");
REGISTER_CPU_OPERATOR(SendTensor, NoDefaultEngineOp);
REGISTER_CPU_OPERATOR(ReceiveTensor, NoDefaultEngineOp);

}  // namespace hetnet
