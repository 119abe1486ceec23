#include "device/cuda/cuda_context.h"
#include "operators/order_switch_ops.h"

namespace hetnet {

// Defined in transpose_op.cu.
template <>
void TransposeKernel<CUDAContext>(const StridedIndex& src, int64_t n, size_t item_size, const void* x, void* y,
                                  CUDAContext* ctx);

REGISTER_CUDA_OPERATOR(NHWC2NCHW, OrderSwitchOp<CUDAContext, true>);
REGISTER_CUDA_OPERATOR(NCHW2NHWC, OrderSwitchOp<CUDAContext, false>);
REGISTER_REDUCED_PRECISION_KERNEL(NHWC2NCHW, CUDA, "", NarrowOrderSwitchKernel());
REGISTER_REDUCED_PRECISION_KERNEL(NCHW2NHWC, CUDA, "", NarrowOrderSwitchKernel());

}  // namespace hetnet
