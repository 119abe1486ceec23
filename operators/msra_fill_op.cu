// NOT VERIFIED ON A GPU. MSRAFill on CUDA: math::RandGaussian's CUDA path (host-drawn numbers, as
// the other random fills), nothing of its own.
#include "device/cuda/cuda_context.h"
#include "operators/msra_fill_op.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(MSRAFill, MSRAFillOp<CUDAContext>);
}  // namespace hetnet
