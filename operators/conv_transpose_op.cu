// ConvTranspose on CUDA, default engine: the cuBLAS + col2im kernels of conv_transpose_op.h (the CUDNN engine,
// preferred when cuDNN is built, is conv_transpose_op_cudnn.cc).
#include "device/cuda/cuda_context.h"
#include "operators/conv_transpose_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(ConvTranspose, ConvTransposeOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ConvTransposeGradient, ConvTransposeGradientOp<CUDAContext>);
}  // namespace hetnet
