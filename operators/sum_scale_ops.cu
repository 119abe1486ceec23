// Sum and Scale on CUDA: kernels are device/cuda/math_cuda.cu's; this file only registers.
#include "device/cuda/cuda_context.h"
#include "operators/sum_scale_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Sum, SumOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Scale, ScaleOp<CUDAContext>);
}  // namespace hetnet
