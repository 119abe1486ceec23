// GivenTensor*Fill on CUDA: a host-to-device copy of the parsed values (no string variant on GPU).
#include "device/cuda/cuda_context.h"
#include "operators/given_tensor_fill_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(GivenTensorFill, GivenTensorFillOp<CUDAContext, float>);
REGISTER_CUDA_OPERATOR(GivenTensorDoubleFill, GivenTensorFillOp<CUDAContext, double>);
REGISTER_CUDA_OPERATOR(GivenTensorIntFill, GivenTensorFillOp<CUDAContext, int32_t>);
REGISTER_CUDA_OPERATOR(GivenTensorInt64Fill, GivenTensorFillOp<CUDAContext, int64_t>);
REGISTER_CUDA_OPERATOR(GivenTensorBoolFill, GivenTensorFillOp<CUDAContext, bool>);
}  // namespace hetnet
