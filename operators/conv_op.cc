// Conv / ConvGradient on CPU: schema (counts, shape inference through conv_pool_shape.h), gradient
// maker (Caffe2's GetConvGradient: no_bias=1 when the forward op has no bias input,
// no_gradient_to_input=1 drops dX) and the CPU kernels of conv_op.h.
#include "operators/conv_op.h"

#include "core/op_cost.h"
#include "operators/conv_gradient_maker.h"

namespace hetnet {

namespace {
std::vector<TensorInfo> ConvShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  if (!in[0].known || !in[1].known) return {TensorInfo::Unknown()};
  const ConvPoolArgs a = ParseConvPoolArgs(def, ConvPoolKind::Conv, true, true);  // DNNL's layouts
  const ConvPoolGeom g = ComputeConvPoolGeom(def, ConvPoolKind::Conv, a, in[0].dims, &in[1].dims,
                                             in.size() > 2 && in[2].known ? &in[2].dims : nullptr);
  return {TensorInfo::Of(g.y_shape(), in[0].dtype)};
}
}  // namespace

OPERATOR_SCHEMA(Conv)
    .NumInputs(2, 4)
    .NumOutputs(1)
    .TensorInference(ConvShape)
    .SetDoc("2-D convolution, NCHW: X [N, C, H, W], filter [M, C/group, kH, kW], optional bias [M] -> "
            "Y [N, M, OH, OW]. Args kernel(s), stride(s), pad(s), dilation(s), group, legacy_pad; "
            "fused_activation \"Relu\" (default kernels; set by the inference rewrite) applies max(Y, 0); "
            "fused_residual 1 (CPU; set by the inference rewrite): a 4th input R added before it; "
            "CUDA tries engine CUDNN (float32/float16, tensor cores for float16) first.");
OPERATOR_SCHEMA(ConvGradient)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const bool no_bias = ArgumentHelper(def).GetSingleArgument<int>("no_bias", 0) != 0;
      std::vector<TensorInfo> out{in[1]};
      if (!no_bias && def.output_size() > 1) out.push_back(TensorInfo::Of({in[1].dims.empty() ? 0 : in[1].dims[0]}, in[1].dtype));
      if (static_cast<int>(out.size()) < def.output_size()) out.push_back(in[0]);
      return out;
    })
    .SetDoc("ConvGradient(X, filter, dY) -> dfilter, dbias (absent with no_bias=1), dX (optional).");

// 2 * N * Cout * OH * OW * (Cin / group) * kH * kW: every output element is a dot product over one
// filter (filter [Cout, Cin/group, kH, kW]); the bias add is left out.
REGISTER_OP_COST(Conv, [](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in,
                          const std::vector<TensorInfo>& out) {
  const double per_filter = in[1].dims.empty() || in[1].dims[0] <= 0 ? 0 : NumElements(in[1]) / in[1].dims[0];
  return ComputeCost(OpKind::kConv, 2.0 * NumElements(out[0]) * per_filter, in, out);
});

REGISTER_CPU_OPERATOR(Conv, ConvOp<CPUContext>);
REGISTER_CPU_OPERATOR(ConvGradient, ConvGradientOp<CPUContext>);

REGISTER_GRADIENT(Conv, GetConvLikeGradient);

}  // namespace hetnet
