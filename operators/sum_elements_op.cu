#include "device/cuda/cuda_context.h"
#include "operators/sum_elements_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(SumElements, SumElementsOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SumElementsGradient, SumElementsGradientOp<CUDAContext>);
}  // namespace hetnet
