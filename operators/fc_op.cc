#include "operators/fc_op.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

OPERATOR_SCHEMA(FC)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      ArgumentHelper args(def);
      const FCDims d = ComputeFCDims(def, in[0].dims, in[1].dims, &in[2].dims,
                                     args.GetSingleArgument<int>("axis", 1), args.GetSingleArgument<int>("axis_w", 1));
      return std::vector<TensorInfo>{TensorInfo::Of(d.y_shape, in[0].dtype)};
    })
    .SetDoc("Y = X * W^T + b; X flattened to 2-D at `axis` (default 1), W at `axis_w` (default 1). "
            "fused_activation \"Relu\" (default kernels, float32; set by the inference rewrite) applies max(Y, 0).");
OPERATOR_SCHEMA(FCGradient)
    .NumInputs(3)
    .NumOutputs(2, 3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      ArgumentHelper args(def);
      const FCDims d = ComputeFCDims(def, in[0].dims, in[1].dims, nullptr, args.GetSingleArgument<int>("axis", 1),
                                     args.GetSingleArgument<int>("axis_w", 1));
      std::vector<TensorInfo> out{in[1], TensorInfo::Of({d.N}, in[1].dtype)};
      if (def.output_size() > 2) out.push_back(in[0]);
      return out;
    });

// One multiply-add per (row, output, inner) triple: 2 * M * N * K.
REGISTER_OP_COST(FC, [](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in,
                        const std::vector<TensorInfo>& out) {
  ArgumentHelper args(def);
  const FCDims d = ComputeFCDims(def, in[0].dims, in[1].dims, &in[2].dims, args.GetSingleArgument<int>("axis", 1),
                                 args.GetSingleArgument<int>("axis_w", 1));
  return ComputeCost(OpKind::kGemm, 2.0 * d.M * d.N * d.K, in, out);
});

REGISTER_CPU_OPERATOR(FC, FCOp<CPUContext>);
REGISTER_CPU_OPERATOR(FCGradient, FCGradientOp<CPUContext>);

class GetFCGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp("FCGradient", {I(0), I(1), GO(0)}, {GI(1), GI(2), GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
REGISTER_GRADIENT(FC, GetFCGradient);

}  // namespace hetnet
