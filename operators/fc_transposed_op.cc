#include "operators/fc_transposed_op.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

OPERATOR_SCHEMA(FCTransposed)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const FCTDims d = ComputeFCTransposedDims(def, in[0].dims, in[1].dims, &in[2].dims);
      return std::vector<TensorInfo>{TensorInfo::Of(d.y_shape, in[0].dtype)};
    })
    .SetDoc("Y = X * W + b; W is K x N (FC with the weight transposed); args axis, axis_w, fused_activation "
            "(\"Relu\": max(Y, 0), default kernels; set by the inference rewrite).");
OPERATOR_SCHEMA(FCTransposedGradient)
    .NumInputs(3)
    .NumOutputs(2, 3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const FCTDims d = ComputeFCTransposedDims(def, in[0].dims, in[1].dims, nullptr);
      std::vector<TensorInfo> out{in[1], TensorInfo::Of({d.N}, in[1].dtype)};
      if (def.output_size() > 2) out.push_back(in[0]);
      return out;
    });

REGISTER_OP_COST(FCTransposed, [](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in,
                                  const std::vector<TensorInfo>& out) {
  const FCTDims d = ComputeFCTransposedDims(def, in[0].dims, in[1].dims, &in[2].dims);
  return ComputeCost(OpKind::kGemm, 2.0 * d.M * d.N * d.K, in, out);
});

REGISTER_CPU_OPERATOR(FCTransposed, FCTransposedOp<CPUContext>);
REGISTER_CPU_OPERATOR(FCTransposedGradient, FCTransposedGradientOp<CPUContext>);

class GetFCTransposedGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("FCTransposedGradient", {I(0), I(1), GO(0)}, {GI(1), GI(2), GI(0)}, args)};
  }
};
REGISTER_GRADIENT(FCTransposed, GetFCTransposedGradient);

}  // namespace hetnet
