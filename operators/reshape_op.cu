// Reshape, Flatten and ResizeLike on CUDA: no kernels (a device copy at most); this file registers.
#include "device/cuda/cuda_context.h"
#include "operators/reshape_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Reshape, ReshapeOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Flatten, FlattenOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ResizeLike, ResizeLikeOp<CUDAContext>);
REGISTER_REDUCED_PRECISION_KERNEL(Reshape, CUDA, "", NarrowReshapeKernel());
REGISTER_REDUCED_PRECISION_KERNEL(Flatten, CUDA, "", NarrowReshapeKernel());
}  // namespace hetnet
