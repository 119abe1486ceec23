// Shape on CUDA: no kernel (the output is a CPU tensor written from the input's dims); registers.
#include "device/cuda/cuda_context.h"
#include "operators/shape_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Shape, ShapeOp<CUDAContext>);
}  // namespace hetnet
