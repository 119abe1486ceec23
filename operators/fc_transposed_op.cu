// FCTransposed on CUDA: the math is cuBLAS / device/math kernels; this file only registers.
#include "device/cuda/cuda_context.h"
#include "operators/fc_transposed_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(FCTransposed, FCTransposedOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(FCTransposedGradient, FCTransposedGradientOp<CUDAContext>);
}  // namespace hetnet
