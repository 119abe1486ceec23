// MaxPool / AveragePool on CPU: schemas, gradient makers, and CPU loops over pool_op.h's
// per-element math.
#include "operators/pool_op.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

template <>
void PoolForward<CPUContext, true>(const PoolParams& p, const float* x, float* y, CPUContext*) {
  const int64_t n = p.N * p.C * p.OH * p.OW;
  for (int64_t i = 0; i < n; ++i) y[i] = PoolForwardAt<true>(p, i, x);
}
template <>
void PoolForward<CPUContext, false>(const PoolParams& p, const float* x, float* y, CPUContext*) {
  const int64_t n = p.N * p.C * p.OH * p.OW;
  for (int64_t i = 0; i < n; ++i) y[i] = PoolForwardAt<false>(p, i, x);
}
template <>
void PoolBackward<CPUContext, true>(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx,
                                    CPUContext*) {
  const int64_t n = p.N * p.C * p.H * p.W;
  for (int64_t i = 0; i < n; ++i) dx[i] = PoolBackwardAt<true>(p, i, x, y, dy);
}
template <>
void PoolBackward<CPUContext, false>(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx,
                                     CPUContext*) {
  const int64_t n = p.N * p.C * p.H * p.W;
  for (int64_t i = 0; i < n; ++i) dx[i] = PoolBackwardAt<false>(p, i, x, y, dy);
}

namespace {
std::vector<TensorInfo> PoolShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  if (!in[0].known) return {TensorInfo::Unknown()};
  const ConvPoolGeom g = ComputeConvPoolGeom(def, ConvPoolKind::Pool, ParsePoolArgs(def), in[0].dims);
  return {TensorInfo::Of(g.y_shape(), in[0].dtype)};
}
const char* kPoolDoc =
    "NCHW pooling; args kernel(s), stride(s), pad(s), global_pooling, legacy_pad (CAFFE_LEGACY_POOLING = "
    "Caffe's ceil mode). Windows are clipped to the input; AveragePool divides by the clipped window "
    "(count_include_pad=1: by kernel_h * kernel_w).";
}  // namespace

OPERATOR_SCHEMA(MaxPool).NumInputs(1).NumOutputs(1).TensorInference(PoolShape).SetDoc(kPoolDoc);
OPERATOR_SCHEMA(AveragePool).NumInputs(1).NumOutputs(1).TensorInference(PoolShape).SetDoc(kPoolDoc);
OPERATOR_SCHEMA(MaxPoolGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);
OPERATOR_SCHEMA(AveragePoolGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

namespace {
// One compare / add per window element of every output; bandwidth-bound.
OpCost PoolCost(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out) {
  const ConvPoolGeom g = ComputeConvPoolGeom(def, ConvPoolKind::Pool, ParsePoolArgs(def), in[0].dims);
  return MemoryCost(in, out, static_cast<double>(g.kh) * g.kw);
}
}  // namespace
REGISTER_OP_COST(MaxPool, PoolCost);
REGISTER_OP_COST(AveragePool, PoolCost);

REGISTER_CPU_OPERATOR(MaxPool, PoolOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(AveragePool, PoolOp<CPUContext, false>);
REGISTER_CPU_OPERATOR(MaxPoolGradient, PoolGradientOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(AveragePoolGradient, PoolGradientOp<CPUContext, false>);

class GetPoolGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp(Def().type() + "Gradient", {I(0), O(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(MaxPool, GetPoolGradient);
REGISTER_GRADIENT(AveragePool, GetPoolGradient);

}  // namespace hetnet
