#include "operators/group_norm_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

GroupNormGeom MakeGroupNormGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int input) {
  ArgumentHelper a(def);
  const std::string order = a.GetSingleArgument<std::string>("order", "NCHW");
  HN_ENFORCE(order == "NCHW" || order == "NHWC", def.type(), ": arg order must be NCHW or NHWC, got '", order, "'");
  const int64_t groups = a.HasArgument("group") ? a.GetSingleArgument<int64_t>("group", 32)
                                                : a.GetSingleArgument<int64_t>("num_groups", 32);
  HN_ENFORCE(x.size() >= 2, def.type(), ": input ", input, " ('", def.input(input), "') of shape ", ShapeToString(x),
             " needs at least 2 dims (N, C, spatial...)");
  GroupNormGeom G;
  G.nhwc = order == "NHWC";
  const int64_t c = G.nhwc ? x.back() : x[1];
  HN_ENFORCE(groups >= 1 && c % groups == 0, def.type(), ": arg group (", groups, ") must be >= 1 and divide the ",
             c, " channels of input ", input, " ('", def.input(input), "') of shape ", ShapeToString(x));
  G.n = x[0];
  G.g = groups;
  G.d = c / groups;
  G.s = G.nhwc ? ProdDims(x, 1, x.size() - 1) : ProdDims(x, 2, x.size());
  HN_ENFORCE(G.s > 0 || G.n * c == 0, def.type(), ": input ", input, " ('", def.input(input), "') of shape ",
             ShapeToString(x), " has no spatial positions to normalize over");
  return G;
}

void CheckGroupNormAffine(const caffe2::OperatorDef& def, GroupNormGeom G, const Tensor& gamma, const Tensor& beta,
                          int ig) {
  EnforceFloatInput(def, gamma, ig);
  EnforceFloatInput(def, beta, ig + 1);
  HN_ENFORCE(gamma.numel() == G.g * G.d && beta.numel() == G.g * G.d, def.type(), ": inputs ", ig, " and ", ig + 1,
             " ('", def.input(ig), "', '", def.input(ig + 1), "') must hold C = ", G.g * G.d, " values each, got ",
             gamma.ShapeString(), " and ", beta.ShapeString());
}

template <>
void GroupNormForward<CPUContext>(GroupNormGeom G, float eps, const float* x, const float* gamma, const float* beta,
                                  float* y, float* mean, float* inv, CPUContext*) {
  for (int64_t i = 0; i < G.n * G.g; ++i) GroupNormGroup(i, G, eps, x, gamma, beta, y, mean, inv);
}

template <>
void GroupNormBackward<CPUContext>(GroupNormGeom G, const float* dy, const float* x, const float* gamma,
                                   const float* mean, const float* inv, float* dx, float* dgamma, float* dbeta,
                                   CPUContext*) {
  // Channel sums first: dX may be dY's buffer.
  for (int64_t c = 0; c < G.g * G.d; ++c) GroupNormAffineGradChannel(c, G, dy, x, mean, inv, dgamma, dbeta);
  for (int64_t i = 0; i < G.n * G.g; ++i) GroupNormGradGroup(i, G, dy, x, gamma, mean, inv, dx);
}

OPERATOR_SCHEMA(GroupNorm)
    .NumInputs(3)
    .NumOutputs(3)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>(3, TensorInfo::Unknown());
      const GroupNormGeom G = MakeGroupNormGeom(def, in[0].dims, 0);
      const TensorInfo stats = TensorInfo::Of({G.n, G.g}, DataType::Float);
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, DataType::Float), stats, stats};
    })
    .SetDoc("GroupNorm(X, gamma, beta) -> (Y, mean, inv_std): channels split into arg `group` (default 32; or "
            "num_groups) groups, each (n, group) normalized over its channels and positions, Y = (X - mean) * "
            "inv_std * gamma[c] + beta[c], inv_std = 1 / sqrt(var + epsilon) (1e-5); order NCHW or NHWC; "
            "statistics [N, G]. Gradient: GroupNormGradient(dY, X, gamma, beta, mean, inv_std) -> (dX, dgamma, "
            "dbeta).");
OPERATOR_SCHEMA(GroupNormGradient)
    .NumInputs(6)
    .NumOutputs(3)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{TensorInfo::Of(in[1].dims, DataType::Float),
                                  TensorInfo::Of(in[2].dims, DataType::Float),
                                  TensorInfo::Of(in[2].dims, DataType::Float)};
      out[0].known = in[1].known;
      out[1].known = out[2].known = in[2].known;
      return out;
    });
REGISTER_CPU_OPERATOR(GroupNorm, GroupNormOp<CPUContext>);
REGISTER_CPU_OPERATOR(GroupNormGradient, GroupNormGradientOp<CPUContext>);

namespace {
class GetGroupNormGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp("GroupNormGradient", {GO(0), I(0), I(1), I(2), O(1), O(2)}, {GI(0), GI(1), GI(2)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(GroupNorm, GetGroupNormGradient);

}  // namespace hetnet
