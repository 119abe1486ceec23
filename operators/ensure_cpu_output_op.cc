#include "operators/ensure_cpu_output_op.h"

#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(EnsureCPUOutput)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .OutputsOnCPU({0})
    .SetDoc("EnsureCPUOutput(input) -> output: a copy of input on the CPU, whatever device the op runs on "
            "(device-to-host for a GPU op, a deep copy on CPU). No gradient.");
NO_GRADIENT(EnsureCPUOutput);
REGISTER_CPU_OPERATOR(EnsureCPUOutput, EnsureCPUOutputOp<CPUContext>);

}  // namespace hetnet
