#include "operators/allgather_op.h"

namespace hetnet {

OPERATOR_SCHEMA(Allgather).NumInputs(2, 1 << 30).NumOutputs(1).InputsOnCPU({0})
    .SetDoc("Concatenates X1..Xn of every rank, rank-major, into the 1-D Y. Needs an engine (GLOO or NCCL).");
REGISTER_CPU_OPERATOR(Allgather, NoDefaultEngineOp);

}  // namespace hetnet
