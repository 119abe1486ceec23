#include "operators/instance_norm_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

namespace {
// [N, C, S] and the strides of the layout arg `order` names; dims from X's shape.
InstanceNormGeom GeomOfShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int input) {
  const std::string order = ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW");
  HN_ENFORCE(order == "NCHW" || order == "NHWC", def.type(), ": arg order must be NCHW or NHWC, got '", order, "'");
  HN_ENFORCE(x.size() >= 2, def.type(), ": input ", input, " ('", def.input(input), "') of shape ", ShapeToString(x),
             " needs at least 2 dims (N, C, spatial...)");
  InstanceNormGeom g;
  g.n = x[0];
  if (order == "NCHW") {
    g.c = x[1];
    g.s = ProdDims(x, 2, x.size());
    g.sn = g.c * g.s;
    g.sc = g.s;
    g.ss = 1;
  } else {
    g.c = x.back();
    g.s = ProdDims(x, 1, x.size() - 1);
    g.sn = g.c * g.s;
    g.sc = 1;
    g.ss = g.c;
  }
  return g;
}
}  // namespace

InstanceNormGeom MakeInstanceNormGeom(const caffe2::OperatorDef& def, const Tensor& X, const Tensor& scale,
                                      const Tensor& bias) {
  for (int k = 0; k < 3; ++k) EnforceFloatInput(def, k == 0 ? X : k == 1 ? scale : bias, k);
  const InstanceNormGeom g = GeomOfShape(def, X.shape(), 0);
  HN_ENFORCE(scale.numel() == g.c && bias.numel() == g.c, def.type(), ": inputs 1 and 2 ('", def.input(1), "', '",
             def.input(2), "') must hold C = ", g.c, " values each, got ", scale.ShapeString(), " and ",
             bias.ShapeString());
  HN_ENFORCE(g.s > 0 || g.n * g.c == 0, def.type(), ": input 0 ('", def.input(0), "') of shape ", X.ShapeString(),
             " has no spatial positions to normalize over");
  return g;
}

template <>
void InstanceNormForward<CPUContext>(InstanceNormGeom g, float eps, const float* x, const float* scale,
                                     const float* bias, float* y, float* mean, float* inv, CPUContext*) {
  for (int64_t i = 0; i < g.n * g.c; ++i) InstanceNormSlice(i, g, eps, x, scale, bias, y, mean, inv);
}

template <>
void InstanceNormBackward<CPUContext>(InstanceNormGeom g, const float* x, const float* dy, const float* scale,
                                      const float* mean, const float* inv, float* dx, float* dscale, float* dbias,
                                      CPUContext*) {
  // Channel sums first: dX may be dY's buffer (in place).
  for (int64_t c = 0; c < g.c; ++c) InstanceNormAffineGradChannel(c, g, x, dy, mean, inv, dscale, dbias);
  for (int64_t i = 0; i < g.n * g.c; ++i) InstanceNormGradSlice(i, g, x, dy, scale, mean, inv, dx);
}

OPERATOR_SCHEMA(InstanceNorm)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out(def.output_size(), TensorInfo::Unknown());
      if (!in[0].known) return out;
      const InstanceNormGeom g = GeomOfShape(def, in[0].dims, 0);
      out[0] = TensorInfo::Of(in[0].dims, DataType::Float);
      for (size_t k = 1; k < out.size(); ++k) out[k] = TensorInfo::Of({g.n, g.c}, DataType::Float);
      return out;
    })
    .SetDoc("InstanceNorm(X, scale, bias) -> (Y, [saved_mean, [saved_inv_stdev]]): each (n, c) slice normalized "
            "over its spatial positions, Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c]; args epsilon "
            "(1e-5), order (NCHW or NHWC). Statistics are [N, C]. Gradient: InstanceNormGradient(X, scale, bias, "
            "dY, [saved_mean, saved_inv_stdev]) -> (dX, dscale, dbias).");
OPERATOR_SCHEMA(InstanceNormGradient)
    .NumInputs(4, 6)
    .NumOutputs(3)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{TensorInfo::Of(in[0].dims, DataType::Float),
                                  TensorInfo::Of(in[1].dims, DataType::Float),
                                  TensorInfo::Of(in[2].dims, DataType::Float)};
      for (int k = 0; k < 3; ++k) out[k].known = in[k].known;
      return out;
    });
REGISTER_CPU_OPERATOR(InstanceNorm, InstanceNormOp<CPUContext>);
REGISTER_CPU_OPERATOR(InstanceNormGradient, InstanceNormGradientOp<CPUContext>);

namespace {
// Caffe2's: the saved statistics are passed on when the forward op produced both.
class GetInstanceNormGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> ins{I(0), I(1), I(2), GO(0)};
    if (Def().output_size() == 3) {
      ins.push_back(O(1));
      ins.push_back(O(2));
    }
    auto op = GradientOp("InstanceNormGradient", ins, {GI(0), GI(1), GI(2)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(InstanceNorm, GetInstanceNormGradient);

}  // namespace hetnet
