// Expand and ExpandGradient on CUDA: the kernels are device/cuda/broadcast_cuda.cu's BroadcastCopy and
// ReduceSumToShape (unverified on a GPU); this file registers.
#include "device/cuda/cuda_context.h"
#include "operators/expand_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Expand, ExpandOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ExpandGradient, ExpandGradientOp<CUDAContext>);
}  // namespace hetnet
