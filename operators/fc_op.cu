// FC on CUDA: all math is cuBLAS / device/math kernels; this file only registers the ops.
#include "device/cuda/cuda_context.h"
#include "operators/fc_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(FC, FCOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(FCGradient, FCGradientOp<CUDAContext>);
}  // namespace hetnet
