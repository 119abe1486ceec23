// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// EnsureCPUOutput on CUDA: the output is a host tensor (schema OutputsOnCPU); the copy is queued
// on the op's stream and waited for.
#include "device/cuda/cuda_context.h"
#include "operators/ensure_cpu_output_op.h"

namespace hetnet {

REGISTER_CUDA_OPERATOR(EnsureCPUOutput, EnsureCPUOutputOp<CUDAContext>);

}  // namespace hetnet
