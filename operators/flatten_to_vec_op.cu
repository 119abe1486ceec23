#include "device/cuda/cuda_context.h"
#include "operators/flatten_to_vec_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(FlattenToVec, FlattenToVecOp<CUDAContext>);
}  // namespace hetnet
