// ConvTranspose / ConvTransposeGradient on CPU: schema (counts, shape inference through conv_pool_shape.h), gradient
// maker (Caffe2's GetConvTransposeGradient: no_bias=1 when the forward op has no bias input,
// no_gradient_to_input=1 drops dX) and the CPU kernels of conv_op.h.
#include "operators/conv_transpose_op.h"

#include "core/op_cost.h"
#include "operators/conv_gradient_maker.h"

namespace hetnet {

namespace {
std::vector<TensorInfo> ConvTransposeShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  if (!in[0].known || !in[1].known) return {TensorInfo::Unknown()};
  if (IsConvTransposeNd(def))
    return {TensorInfo::Of(ComputeConvTransposeNdGeom(def, in[0].dims, in[1].dims,
                                                      in.size() > 2 && in[2].known ? &in[2].dims : nullptr)
                               .y_shape(),
                           in[0].dtype)};
  const ConvPoolArgs a = ParseConvPoolArgs(def, ConvPoolKind::ConvTranspose);
  const ConvPoolGeom g = ComputeConvPoolGeom(def, ConvPoolKind::ConvTranspose, a, in[0].dims, &in[1].dims,
                                             in.size() > 2 && in[2].known ? &in[2].dims : nullptr);
  return {TensorInfo::Of(g.y_shape(), in[0].dtype)};
}
}  // namespace

OPERATOR_SCHEMA(ConvTranspose)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference(ConvTransposeShape)
    .SetDoc("Transposed convolution, NCHW: X [N, C, H, W], filter [C, M/group, kH, kW], optional bias [M] "
            "-> Y [N, M, (H-1)*stride + dilation*(kH-1) + 1 + adj - pad_t - pad_b, ...]. Args kernel(s), stride(s), "
            "dilation(s), pad(s), adj(s), group, legacy_pad (VALID/SAME: no padding). A `kernels` argument of other "
            "than 2 values is the N-D form (pads: begins then ends), CPU only.");
OPERATOR_SCHEMA(ConvTransposeGradient)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      ArgumentHelper a(def);
      const bool no_bias = a.GetSingleArgument<int>("no_bias", 0) != 0;
      const int64_t m = in[1].dims.size() == 4 ? in[1].dims[1] * a.GetSingleArgument<int>("group", 1) : 0;
      std::vector<TensorInfo> out{in[1]};
      if (!no_bias && def.output_size() > 1) out.push_back(TensorInfo::Of({m}, in[1].dtype));
      if (static_cast<int>(out.size()) < def.output_size()) out.push_back(in[0]);
      return out;
    })
    .SetDoc("ConvTransposeGradient(X, filter, dY) -> dfilter, dbias (absent with no_bias=1), dX (optional).");

// Every input element scatters through one filter slice (filter [Cin, Cout/group, kH, kW]):
// 2 * N * Cin * H * W * (Cout / group) * kH * kW.
REGISTER_OP_COST(ConvTranspose, [](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in,
                                   const std::vector<TensorInfo>& out) {
  const double per_input = in[1].dims.empty() || in[1].dims[0] <= 0 ? 0 : NumElements(in[1]) / in[1].dims[0];
  return ComputeCost(OpKind::kConv, 2.0 * NumElements(in[0]) * per_input, in, out);
});

REGISTER_CPU_OPERATOR(ConvTranspose, ConvTransposeOp<CPUContext>);
REGISTER_CPU_OPERATOR(ConvTransposeGradient, ConvTransposeGradientOp<CPUContext>);

REGISTER_GRADIENT(ConvTranspose, GetConvLikeGradient);

}  // namespace hetnet
