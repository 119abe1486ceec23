// Conv / ConvGradient, CUDNN engine (tried first for CUDA ops): see conv_op_cudnn.h.
#include "core/reduced_precision.h"
#include "operators/conv_op_cudnn.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Conv, CUDNN, cudnn_conv::CudnnConvOp<ConvPoolKind::Conv>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ConvGradient, CUDNN, cudnn_conv::CudnnConvGradientOp<ConvPoolKind::Conv>);

// Reduced-precision inference (core/reduced_precision.h): X, filter, bias and a fused residual in
// float16 on tensor cores, float32 accumulation. 2-D NCHW convolutions with symmetric pads only:
// what cuDNN expresses (the default engine, which takes the rest, is float32 only).
REGISTER_REDUCED_PRECISION_KERNEL(Conv, CUDA, "CUDNN",
                                  {{DataType::Float16}, -1, false, [](const caffe2::OperatorDef& op, DataType) {
                                     const ArgumentHelper a(op);
                                     if (a.GetSingleArgument<int>("legacy_pad", 0) != 0 ||
                                         a.GetSingleArgument<std::string>("order", "NCHW") != "NCHW" ||
                                         (a.HasArgument("kernels") && a.GetRepeatedArgument<int>("kernels").size() != 2))
                                       return false;
                                     if (a.HasArgument("pad")) return true;  // (as ParseConvPoolArgs: pad, pad_*, pads)
                                     const auto pads = a.GetRepeatedArgument<int>("pads");
                                     if (!pads.empty()) return pads.size() == 4 && pads[0] == pads[2] && pads[1] == pads[3];
                                     return a.GetSingleArgument<int>("pad_t", 0) == a.GetSingleArgument<int>("pad_b", 0) &&
                                            a.GetSingleArgument<int>("pad_l", 0) == a.GetSingleArgument<int>("pad_r", 0);
                                   }});
}  // namespace hetnet
