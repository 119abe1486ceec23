// ConvTranspose / ConvTransposeGradient, CUDNN engine: see conv_op_cudnn.h.
#include "operators/conv_op_cudnn.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ConvTranspose, CUDNN, cudnn_conv::CudnnConvOp<ConvPoolKind::ConvTranspose>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ConvTransposeGradient, CUDNN,
                                   cudnn_conv::CudnnConvGradientOp<ConvPoolKind::ConvTranspose>);
}  // namespace hetnet
