// Slice and SliceGradient on CUDA: the kernels are device/cuda/broadcast_cuda.cu's BroadcastCopy and
// ScatterCopy over the slice's strided plan (unverified on a GPU); this file registers.
#include "device/cuda/cuda_context.h"
#include "operators/slice_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Slice, SliceOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SliceGradient, SliceGradientOp<CUDAContext>);
}  // namespace hetnet
