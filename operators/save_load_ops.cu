// Save and Load placed on a GPU: Save copies GPU tensors to the host itself; Load fills outputs on
// the op's GPU (or, with keep_device=1, where the file says).
#include "device/cuda/cuda_context.h"
#include "operators/save_load_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(Save, SaveOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Load, LoadOp<CUDAContext>);
}  // namespace hetnet
