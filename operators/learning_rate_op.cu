#include "device/cuda/cuda_context.h"
#include "operators/learning_rate_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(LearningRate, LearningRateOp<CUDAContext>);
}  // namespace hetnet
