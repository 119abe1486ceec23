// The elementwise ops on CUDA: the kernels are device/cuda/math_cuda.cu's BroadcastBinary and
// ReduceSumPreMidPost; this file only registers.
#include "device/cuda/cuda_context.h"
#include "operators/elementwise_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Add, BinaryElementwiseOp<CUDAContext, math::BinaryOp::Add>);
REGISTER_CUDA_OPERATOR(Sub, BinaryElementwiseOp<CUDAContext, math::BinaryOp::Sub>);
REGISTER_CUDA_OPERATOR(Mul, BinaryElementwiseOp<CUDAContext, math::BinaryOp::Mul>);
REGISTER_CUDA_OPERATOR(Div, BinaryElementwiseOp<CUDAContext, math::BinaryOp::Div>);
REGISTER_CUDA_OPERATOR(AddGradient, BinaryElementwiseGradientOp<CUDAContext, math::BinaryOp::Add>);
REGISTER_CUDA_OPERATOR(SubGradient, BinaryElementwiseGradientOp<CUDAContext, math::BinaryOp::Sub>);
REGISTER_CUDA_OPERATOR(MulGradient, BinaryElementwiseGradientOp<CUDAContext, math::BinaryOp::Mul>);
REGISTER_CUDA_OPERATOR(DivGradient, BinaryElementwiseGradientOp<CUDAContext, math::BinaryOp::Div>);
}  // namespace hetnet
