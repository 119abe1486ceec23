// The fills on CUDA: math::Set kernels and host-drawn random numbers (device/cuda/math_cuda.cu).
#include "device/cuda/cuda_context.h"
#include "operators/filler_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(ConstantFill, ConstantFillOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(UniformFill, RandomFillOp<CUDAContext, RandomFill::Uniform>);
REGISTER_CUDA_OPERATOR(GaussianFill, RandomFillOp<CUDAContext, RandomFill::Gaussian>);
REGISTER_CUDA_OPERATOR(XavierFill, RandomFillOp<CUDAContext, RandomFill::Xavier>);
}  // namespace hetnet
