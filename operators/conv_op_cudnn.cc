// Conv / ConvGradient, CUDNN engine (tried first for CUDA ops): see conv_op_cudnn.h.
#include "operators/conv_op_cudnn.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Conv, CUDNN, cudnn_conv::CudnnConvOp<ConvPoolKind::Conv>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ConvGradient, CUDNN, cudnn_conv::CudnnConvGradientOp<ConvPoolKind::Conv>);
}  // namespace hetnet
