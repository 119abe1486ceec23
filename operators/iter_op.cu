// Iter for GPU-placed nets: the counter stays on CPU (schema device inference), the op runs on host.
#include "device/cuda/cuda_context.h"
#include "operators/iter_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Iter, IterOp<CUDAContext>);
}  // namespace hetnet
