#include "operators/reduce_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/gradient.h"

namespace hetnet {

ReducePlan ComputeReducePlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x) {
  ArgumentHelper args(def);
  const int nd = static_cast<int>(x.size());
  const bool keepdims = args.GetSingleArgument<int>("keepdims", 1) != 0;
  std::vector<bool> red(nd, false);
  if (!args.HasArgument("axes")) {
    red.assign(nd, true);
  } else {
    for (int a : args.GetRepeatedArgument<int>("axes")) red[CanonicalAxisFor(def, a, nd, 0)] = true;
  }
  const std::vector<int64_t> xst = RowMajorStrides(x);
  std::vector<int64_t> ks, kst, rs, rst, yfull;
  ReducePlan p;
  for (int d = 0; d < nd; ++d) {
    if (red[d]) {
      rs.push_back(x[d]);
      rst.push_back(xst[d]);
      p.count *= x[d];
      yfull.push_back(1);
      if (keepdims) p.y_shape.push_back(1);
    } else {
      ks.push_back(x[d]);
      kst.push_back(xst[d]);
      p.y_numel *= x[d];
      yfull.push_back(x[d]);
      p.y_shape.push_back(x[d]);
    }
  }
  std::vector<int64_t> back = RowMajorStrides(yfull);
  for (int d = 0; d < nd; ++d)
    if (red[d]) back[d] = 0;
  p.kept = MakeStridedIndex(def, ks, kst);
  p.reduced = MakeStridedIndex(def, rs, rst);
  p.back = MakeStridedIndex(def, x, back);
  return p;
}

template <typename T, class Context>
void ReduceKernel(const ReducePlan& p, bool mean, const T* x, T* y, Context*) {
  using Acc = std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;
  for (int64_t o = 0; o < p.y_numel; ++o) {
    const T* base = x + p.kept.Offset(o);
    Acc s = 0;
    for (int64_t r = 0; r < p.count; ++r) s += base[p.reduced.Offset(r)];
    if (mean) {
      y[o] = p.count > 0 ? static_cast<T>(s / static_cast<Acc>(p.count)) : std::numeric_limits<T>::quiet_NaN();
    } else {
      y[o] = static_cast<T>(s);
    }
  }
}
template void ReduceKernel<float, CPUContext>(const ReducePlan&, bool, const float*, float*, CPUContext*);
template void ReduceKernel<double, CPUContext>(const ReducePlan&, bool, const double*, double*, CPUContext*);
template void ReduceKernel<int32_t, CPUContext>(const ReducePlan&, bool, const int32_t*, int32_t*, CPUContext*);
template void ReduceKernel<int64_t, CPUContext>(const ReducePlan&, bool, const int64_t*, int64_t*, CPUContext*);

template <>
void ReduceGradientKernel<CPUContext>(const ReducePlan& p, int64_t x_numel, float scale, const float* dy, float* dx,
                                      CPUContext*) {
  for (int64_t i = 0; i < x_numel; ++i) dx[i] = dy[p.back.Offset(i)] * scale;
}

namespace {
std::vector<TensorInfo> ReduceShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  return {TensorInfo::Of(ComputeReducePlan(def, in[0].dims).y_shape, in[0].dtype)};
}
}  // namespace

OPERATOR_SCHEMA(ReduceSum).NumInputs(1).NumOutputs(1).TensorInference(ReduceShape)
    .SetDoc("Sum over `axes` (default all) with keepdims (default 1).");
OPERATOR_SCHEMA(ReduceMean).NumInputs(1).NumOutputs(1).TensorInference(ReduceShape)
    .SetDoc("Mean over `axes` (default all) with keepdims (default 1).");
OPERATOR_SCHEMA(ReduceSumGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(1);
OPERATOR_SCHEMA(ReduceMeanGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(1);

REGISTER_CPU_OPERATOR(ReduceSum, ReduceOp<CPUContext, false>);
REGISTER_CPU_OPERATOR(ReduceMean, ReduceOp<CPUContext, true>);
REGISTER_CPU_OPERATOR(ReduceSumGradient, ReduceGradientOp<CPUContext, false>);
REGISTER_CPU_OPERATOR(ReduceMeanGradient, ReduceGradientOp<CPUContext, true>);

class GetReduceGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp(Def().type() + "Gradient", {GO(0), I(0), O(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(ReduceSum, GetReduceGradient);
REGISTER_GRADIENT(ReduceMean, GetReduceGradient);

}  // namespace hetnet
