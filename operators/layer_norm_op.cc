#include "operators/layer_norm_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

LayerNormGeom MakeLayerNormGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int axis) {
  LayerNormGeom g;
  g.m = ProdDims(x, 0, axis);
  g.n = ProdDims(x, axis, x.size());
  HN_ENFORCE(g.n > 0 || g.m == 0, def.type(), ": input 0 ('", def.input(0), "') of shape ", ShapeToString(x),
             " has no elements to normalize from axis ", axis);
  return g;
}

std::vector<int64_t> LayerNormMomentsShape(const std::vector<int64_t>& x, int axis) {
  std::vector<int64_t> s(x.begin(), x.begin() + axis);
  s.push_back(1);
  return s;
}

template <>
void LayerNormForward<CPUContext>(LayerNormGeom g, float eps, const float* x, const float* gamma, const float* beta,
                                  float* y, float* mean, float* stdev, CPUContext*) {
  for (int64_t i = 0; i < g.m; ++i) LayerNormRow(i, g, eps, x, gamma, beta, y, mean, stdev);
}

template <>
void LayerNormBackward<CPUContext>(LayerNormGeom g, const float* dy, const float* x, const float* mean,
                                   const float* stdev, const float* gamma, float* dx, float* dgamma, float* dbeta,
                                   CPUContext*) {
  for (int64_t i = 0; i < g.m; ++i) LayerNormGradRow(i, g, dy, x, mean, stdev, gamma, dx);
  if (dgamma)
    for (int64_t j = 0; j < g.n; ++j) LayerNormAffineGradCol(j, g, dy, x, mean, stdev, dgamma, dbeta);
}

OPERATOR_SCHEMA(LayerNorm)
    .NumInputs(1, 3)
    .NumOutputs(3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>(3, TensorInfo::Unknown());
      const int nd = static_cast<int>(in[0].dims.size());
      const int axis = CanonicalAxisFor(def, ArgumentHelper(def).GetSingleArgument<int>("axis", 1), nd, 0);
      const auto moments = TensorInfo::Of(LayerNormMomentsShape(in[0].dims, axis), DataType::Float);
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, DataType::Float), moments, moments};
    })
    .SetDoc("LayerNorm(X, [gamma, beta]) -> (Y, mean, std): normalizes X over the dims from arg `axis` (default 1) "
            "on; std = sqrt(var + epsilon) (default 1e-5); with elementwise_affine=1, Y = Y * gamma + beta (gamma, "
            "beta shaped X.dims[axis:]). mean and std are shaped X.dims[:axis] + [1]. Gradient: LayerNormGradient.");
OPERATOR_SCHEMA(LayerNormGradient)
    .NumInputs(5, 6)
    .NumOutputs(1, 3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{TensorInfo::Of(in[4].dims, DataType::Float)};
      out[0].known = in[4].known;
      for (int k = 1; k < def.output_size(); ++k) {
        out.push_back(in.size() == 6 ? TensorInfo::Of(in[5].dims, DataType::Float) : TensorInfo::Unknown());
        out.back().known = in.size() == 6 && in[5].known;
      }
      return out;
    });
REGISTER_CPU_OPERATOR(LayerNorm, LayerNormOp<CPUContext>);
REGISTER_CPU_OPERATOR(LayerNormGradient, LayerNormGradientOp<CPUContext>);

namespace {
// LayerNormGradient(dY, Y, mean, std, X, [gamma]) -> (dX, [dgamma, dbeta]), Caffe2's input order.
class GetLayerNormGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> ins{GO(0), O(0), O(1), O(2), I(0)};
    std::vector<std::string> outs{GI(0)};
    if (Def().input_size() == 3) {
      ins.push_back(I(1));
      outs.push_back(GI(1));
      outs.push_back(GI(2));
    }
    auto op = GradientOp("LayerNormGradient", ins, outs);
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(LayerNorm, GetLayerNormGradient);

}  // namespace hetnet
