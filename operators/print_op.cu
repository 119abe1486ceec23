// NOT VERIFIED ON A GPU (compiled with nvcc here; the machine has no GPU).
// Print on CUDA: waits for the op's stream, copies the input to the host and prints it there.
#include "device/cuda/cuda_context.h"
#include "operators/print_op.h"

namespace hetnet {

REGISTER_CUDA_OPERATOR(Print, PrintOp<CUDAContext>);

}  // namespace hetnet
