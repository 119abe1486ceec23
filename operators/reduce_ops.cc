#include "operators/reduce_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/gradient.h"
#include "operators/cpu_chunked.h"

namespace hetnet {

std::vector<int64_t> ReadAxesInput(const caffe2::OperatorDef& def, const Tensor& A, int index) {
  HN_ENFORCE(A.ndim() <= 1, def.type(), ": input ", index, " ('", def.input(index), "') holds the axes and must be 0-D "
             "or 1-D, has shape ", A.ShapeString());
  if (A.dtype() == DataType::Int64) return {A.data<int64_t>(), A.data<int64_t>() + A.numel()};
  HN_ENFORCE(A.dtype() == DataType::Int32, def.type(), ": input ", index, " ('", def.input(index), "') holds the axes "
             "and is ", DataTypeName(A.dtype()), " but int64 or int32 is required");
  return {A.data<int32_t>(), A.data<int32_t>() + A.numel()};
}

ReducePlan ComputeReducePlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                             const std::vector<int64_t>* runtime_axes, int axes_input) {
  ArgumentHelper args(def);
  const int nd = static_cast<int>(x.size());
  const bool keepdims = args.GetSingleArgument<int>("keepdims", 1) != 0;
  const bool noop = args.GetSingleArgument<int>("noop_with_empty_axes", 0) != 0;
  const std::vector<int64_t> axes = runtime_axes ? *runtime_axes : args.GetRepeatedArgument<int64_t>("axes");
  const std::string from = runtime_axes ? "input " + std::to_string(axes_input) + " ('" + def.input(axes_input) + "')"
                                        : std::string("arg axes");
  std::vector<bool> red(nd, axes.empty() && !noop);
  for (int64_t a : axes) {
    HN_ENFORCE(a >= -nd && a < nd, def.type(), ": axis ", a, " (", from, ") is out of range for input 0 ('",
               def.input(0), "') with ", nd, " dims");
    const int64_t c = a < 0 ? a + nd : a;
    HN_ENFORCE(!red[c], def.type(), ": axis ", a, " (", from, ") repeats dim ", c, " of input 0 ('", def.input(0),
               "')");
    red[c] = true;
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

namespace {
// Whether each output's reduced elements are one contiguous run of p.count (the innermost dims).
bool ReducedIsContiguous(const ReducePlan& p) {
  int64_t stride = 1;
  for (int d = p.reduced.n - 1; d >= 0; --d) {
    if (p.reduced.sizes[d] == 1) continue;
    if (p.reduced.strides[d] != stride) return false;
    stride *= p.reduced.sizes[d];
  }
  return true;
}

// Whether x is [count, y_numel] with the reduced dims leading (output o of reduced row r at
// r * y_numel + o), as for a bias gradient's sum over the batch.
bool ReducedIsLeading(const ReducePlan& p) {
  int64_t stride = 1;
  for (const StridedIndex* s : {&p.kept, &p.reduced})
    for (int d = s->n - 1; d >= 0; --d) {
      if (s->sizes[d] == 1) continue;
      if (s->strides[d] != stride) return false;
      stride *= s->sizes[d];
    }
  return true;
}

// The float64 sum of n floats in 16 lanes (vectorized; the lanes are added pairwise at the end). The
// same float64 accumulation as ReduceOne's, in another order: the rounded float sums agree except
// where float64 rounding tips a float halfway case; NaN and infinities come out the same.
double SumFloats(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += static_cast<double>(x[i + l]);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]);
  return acc[0];
}
}  // namespace

// Float sums and means over the innermost dims read rows directly (the strided index divides per
// element: 3.5 ns an element, 14x numpy), rows chunked over the OpenMP team above 64K elements.
template <typename T, class Context>
void ReduceKernel(const ReducePlan& p, ReduceKind kind, const T* x, T* y, Context*) {
  if constexpr (std::is_same<T, float>::value) {
    if ((kind == ReduceKind::kSum || kind == ReduceKind::kMean) && p.count > 0 && ReducedIsContiguous(p)) {
      CpuChunkedRows(p.y_numel, p.count, [&](int64_t first, int64_t rows) {
        for (int64_t o = first; o < first + rows; ++o) {
          const double s = SumFloats(x + p.kept.Offset(o), p.count);
          y[o] = static_cast<float>(kind == ReduceKind::kMean ? s / static_cast<double>(p.count) : s);
        }
      });
      return;
    }
    // Leading reduced dims: each output's float64 sum in ReduceOne's order (so bitwise its result),
    // over columns of x (vectorized across outputs), column ranges chunked over the team.
    if ((kind == ReduceKind::kSum || kind == ReduceKind::kMean) && p.count > 0 && p.y_numel > 0 &&
        ReducedIsLeading(p)) {
      const int64_t cols = p.y_numel;
      CpuChunkedRows(cols, p.count, [&](int64_t first, int64_t k) {
        std::vector<double> acc(static_cast<size_t>(k), 0.0);
        for (int64_t r = 0; r < p.count; ++r) {
          const float* xr = x + r * cols + first;
          for (int64_t j = 0; j < k; ++j) acc[j] += static_cast<double>(xr[j]);
        }
        for (int64_t j = 0; j < k; ++j)
          y[first + j] = static_cast<float>(kind == ReduceKind::kMean ? acc[j] / static_cast<double>(p.count) : acc[j]);
      });
      return;
    }
  }
  for (int64_t o = 0; o < p.y_numel; ++o) y[o] = ReduceOne<T>(kind, x + p.kept.Offset(o), p.reduced, p.count);
}
template void ReduceKernel<float, CPUContext>(const ReducePlan&, ReduceKind, const float*, float*, CPUContext*);
template void ReduceKernel<double, CPUContext>(const ReducePlan&, ReduceKind, const double*, double*, CPUContext*);
template void ReduceKernel<int32_t, CPUContext>(const ReducePlan&, ReduceKind, const int32_t*, int32_t*, CPUContext*);
template void ReduceKernel<int64_t, CPUContext>(const ReducePlan&, ReduceKind, const int64_t*, int64_t*, CPUContext*);
template void ReduceKernel<bool, CPUContext>(const ReducePlan&, ReduceKind, const bool*, bool*, CPUContext*);

// With the reduced dims innermost (or leading), each output's run of p.count elements (or each
// reduced row) is filled directly, the same product per element; chunked over the OpenMP team above
// 64K elements.
template <>
void ReduceGradientKernel<CPUContext>(const ReducePlan& p, int64_t x_numel, float scale, const float* dy, float* dx,
                                      CPUContext*) {
  if (p.count > 0 && x_numel == p.y_numel * p.count && ReducedIsContiguous(p)) {
    CpuChunkedRows(p.y_numel, p.count, [&](int64_t first, int64_t rows) {
      for (int64_t o = first; o < first + rows; ++o) {
        const float v = dy[o] * scale;
        float* d = dx + p.kept.Offset(o);
        for (int64_t r = 0; r < p.count; ++r) d[r] = v;
      }
    });
    return;
  }
  if (p.count > 0 && p.y_numel > 0 && x_numel == p.y_numel * p.count && ReducedIsLeading(p)) {
    CpuChunkedRows(p.count, p.y_numel, [&](int64_t first, int64_t rows) {
      for (int64_t r = first; r < first + rows; ++r) {
        float* d = dx + r * p.y_numel;
        for (int64_t o = 0; o < p.y_numel; ++o) d[o] = dy[o] * scale;
      }
    });
    return;
  }
  for (int64_t i = 0; i < x_numel; ++i) dx[i] = dy[p.back.Offset(i)] * scale;
}

namespace {
std::vector<TensorInfo> ReduceShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  if (def.input_size() > 1) return {TensorInfo::Unknown()};  // axes known only at run time
  return {TensorInfo::Of(ComputeReducePlan(def, in[0].dims).y_shape, in[0].dtype)};
}
}  // namespace

#define HN_REDUCE_SCHEMA(Name, doc)                                                                          \
  OPERATOR_SCHEMA(Name).NumInputs(1, 2).NumOutputs(1).InputsOnCPU({1}).TensorInference(ReduceShape).SetDoc( \
      doc " over `axes` (arg, or the int32/int64 input 1 read at run time; default all, or none with "      \
      "noop_with_empty_axes=1) with keepdims (default 1).")
HN_REDUCE_SCHEMA(ReduceSum, "Sum");
HN_REDUCE_SCHEMA(ReduceMean, "Mean");
HN_REDUCE_SCHEMA(ReduceMax, "Maximum (NaN propagates; -inf when empty)");
HN_REDUCE_SCHEMA(ReduceMin, "Minimum (NaN propagates; +inf when empty)");
HN_REDUCE_SCHEMA(ReduceProd, "Product");
HN_REDUCE_SCHEMA(ReduceLogSumExp, "log(sum(exp)), computed stably,");
#undef HN_REDUCE_SCHEMA
OPERATOR_SCHEMA(ReduceSumGradient).NumInputs(3, 4).NumOutputs(1).InputsOnCPU({3}).IdenticalTypeAndShapeOfInput(1);
OPERATOR_SCHEMA(ReduceMeanGradient).NumInputs(3, 4).NumOutputs(1).InputsOnCPU({3}).IdenticalTypeAndShapeOfInput(1);

REGISTER_CPU_OPERATOR(ReduceSum, ReduceOp<CPUContext, ReduceKind::kSum>);
REGISTER_CPU_OPERATOR(ReduceMean, ReduceOp<CPUContext, ReduceKind::kMean>);
REGISTER_CPU_OPERATOR(ReduceMax, ReduceOp<CPUContext, ReduceKind::kMax>);
REGISTER_CPU_OPERATOR(ReduceMin, ReduceOp<CPUContext, ReduceKind::kMin>);
REGISTER_CPU_OPERATOR(ReduceProd, ReduceOp<CPUContext, ReduceKind::kProd>);
REGISTER_CPU_OPERATOR(ReduceLogSumExp, ReduceOp<CPUContext, ReduceKind::kLogSumExp>);
REGISTER_CPU_OPERATOR(ReduceSumGradient, ReduceGradientOp<CPUContext, false>);
REGISTER_CPU_OPERATOR(ReduceMeanGradient, ReduceGradientOp<CPUContext, true>);

class GetReduceGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    std::vector<std::string> in{GO(0), I(0), O(0)};
    if (Def().input_size() > 1) in.push_back(I(1));  // runtime axes
    return {GradientOp(Def().type() + "Gradient", in, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(ReduceSum, GetReduceGradient);
REGISTER_GRADIENT(ReduceMean, GetReduceGradient);

}  // namespace hetnet
