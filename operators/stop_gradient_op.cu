#include "device/cuda/cuda_context.h"
#include "operators/stop_gradient_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(StopGradient, StopGradientOp<CUDAContext>);
}  // namespace hetnet
