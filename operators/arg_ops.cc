#include "operators/arg_ops.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

ArgGeom MakeArgGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x) {
  ArgumentHelper args(def);
  int axis = args.GetSingleArgument<int>("axis", -1);
  const bool keepdims = args.GetSingleArgument<int>("keepdims", 1) != 0;
  const int nd = static_cast<int>(x.size());
  HN_ENFORCE(axis >= -nd && axis < nd, def.type(), ": axis ", axis, " is out of range for input 0 ('", def.input(0),
             "') of shape ", ShapeToString(x));
  if (axis < 0) axis += nd;
  ArgGeom g;
  for (int d = 0; d < axis; ++d) g.outer *= x[d];
  g.n = x[axis];
  for (int d = axis + 1; d < nd; ++d) g.inner *= x[d];
  HN_ENFORCE(g.n > 0 || g.outer * g.inner == 0, def.type(), ": input 0 ('", def.input(0), "') of shape ",
             ShapeToString(x), " has no entries along axis ", axis, " to choose from");
  g.out_shape = x;
  if (keepdims) g.out_shape[axis] = 1;
  else g.out_shape.erase(g.out_shape.begin() + axis);
  return g;
}

template <bool IsMax, typename T, class Context>
void ArgReduce(int64_t outer, int64_t n, int64_t inner, const T* x, int64_t* y, Context*) {
  for (int64_t j = 0, m = outer * inner; j < m; ++j) y[j] = ArgReduceAt<IsMax, T>(x, n, inner, j);
}
#define HN_INSTANTIATE_ARG(T)                                                                         \
  template void ArgReduce<true, T, CPUContext>(int64_t, int64_t, int64_t, const T*, int64_t*, CPUContext*); \
  template void ArgReduce<false, T, CPUContext>(int64_t, int64_t, int64_t, const T*, int64_t*, CPUContext*);
HN_INSTANTIATE_ARG(float)
HN_INSTANTIATE_ARG(double)
HN_INSTANTIATE_ARG(int32_t)
HN_INSTANTIATE_ARG(int64_t)
#undef HN_INSTANTIATE_ARG

namespace {
std::vector<TensorInfo> ArgShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  return {TensorInfo::Of(MakeArgGeom(def, in[0].dims).out_shape, DataType::Int64)};
}
}  // namespace

OPERATOR_SCHEMA(ArgMax).NumInputs(1).NumOutputs(1).TensorInference(ArgShape).SetDoc(
    "ArgMax(X) -> int64 positions of the largest entry along arg `axis` (default -1; first on ties, first NaN "
    "wins); arg `keepdims` (default 1) keeps that dim as 1. No gradient.");
OPERATOR_SCHEMA(ArgMin).NumInputs(1).NumOutputs(1).TensorInference(ArgShape).SetDoc(
    "ArgMin(X) -> int64 positions of the smallest entry along arg `axis` (default -1; first on ties, first NaN "
    "wins); arg `keepdims` (default 1) keeps that dim as 1. No gradient.");
NO_GRADIENT(ArgMax);
NO_GRADIENT(ArgMin);
REGISTER_CPU_OPERATOR(ArgMax, ArgReduceOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(ArgMin, ArgReduceOp<CPUContext, false>);

}  // namespace hetnet
