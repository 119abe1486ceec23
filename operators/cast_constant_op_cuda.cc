// CastConstant's CUDA kernel (operators/cast_constant_op.h): a weight on the GPU converted by the
// GPU's Cast, again only when it changes. Run on an H100 (2026-11-27).
#include "device/cuda/cuda_context.h"
#include "operators/cast_constant_op.h"

namespace hetnet {

REGISTER_CUDA_OPERATOR(CastConstant, CastConstantOp<CUDAContext>);

}  // namespace hetnet
