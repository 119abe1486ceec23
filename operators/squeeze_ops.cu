// Squeeze and ExpandDims on CUDA: a copy on the op's stream (or nothing in place); this file only registers.
#include "device/cuda/cuda_context.h"
#include "operators/squeeze_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Squeeze, SqueezeOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ExpandDims, ExpandDimsOp<CUDAContext>);
}  // namespace hetnet
