// Conv / ConvGradient, CUDNN engine (tried first for CUDA ops): see conv_op_cudnn.h.
#include "operators/conv_op_cudnn.h"

#include "core/reduced_precision.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Conv, CUDNN, cudnn_conv::CudnnConvOp<ConvPoolKind::Conv>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ConvGradient, CUDNN, cudnn_conv::CudnnConvGradientOp<ConvPoolKind::Conv>);

// Reduced-precision inference (core/reduced_precision.h): X, filter, bias and a fused residual in
// float16 (tensor cores, float32 accumulation), on channels-last activations only, which the layout
// pass (core/channels_last_pass.h) gives float16 GPU nets: on NCHW tensors cuDNN's float16 kernels
// ran ResNet-50 at batch 8 slower than float32 on the H100 (2026-11-27: Conv time 7.8 ms against
// 4.9 ms per run). NOT YET RUN ON A GPU on NHWC: written 2026-11-27 on a machine without one.
REGISTER_REDUCED_PRECISION_KERNEL(Conv, CUDA, "CUDNN",
                                  {{DataType::Float16}, -1, false, [](const caffe2::OperatorDef& op, DataType) {
                                     const ArgumentHelper a(op);
                                     return a.GetSingleArgument<std::string>("activation_order", "NCHW") == "NHWC" ||
                                            a.GetSingleArgument<std::string>("order", "NCHW") == "NHWC";
                                   }});
}  // namespace hetnet
