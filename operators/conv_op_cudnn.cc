// Conv / ConvGradient, CUDNN engine (tried first for CUDA ops): see conv_op_cudnn.h.
// Not registered for float16 inference (core/reduced_precision.h): on the H100 (2026-11-27) cuDNN's
// float16 convolutions on NCHW tensors ran ResNet-50 at batch 8 slower than float32 (Conv time
// 7.8 ms against 4.9 ms per run), the tensor-core kernels wanting NHWC; the float16 kernel still
// runs where a net's tensors are float16 already.
#include "operators/conv_op_cudnn.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Conv, CUDNN, cudnn_conv::CudnnConvOp<ConvPoolKind::Conv>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ConvGradient, CUDNN, cudnn_conv::CudnnConvGradientOp<ConvPoolKind::Conv>);
}  // namespace hetnet
