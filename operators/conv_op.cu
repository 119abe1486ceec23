// Conv on CUDA, default engine: the im2col + cuBLAS kernels of conv_op.h (the CUDNN engine,
// preferred when cuDNN is built, is conv_op_cudnn.cc).
#include "device/cuda/cuda_context.h"
#include "operators/conv_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Conv, ConvOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ConvGradient, ConvGradientOp<CUDAContext>);
}  // namespace hetnet
