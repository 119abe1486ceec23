#include "operators/concat_split_ops.h"

#include <cstring>

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

template <>
void CopyMatrixBytes<CPUContext>(int64_t rows, int64_t row_bytes, const void* src, int64_t src_pitch, void* dst,
                                 int64_t dst_pitch, CPUContext*) {
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, row_bytes);
}

int ConcatAxis(const caffe2::OperatorDef& def, int ndim) {
  ArgumentHelper args(def);
  HN_ENFORCE(!(args.HasArgument("axis") && args.HasArgument("order")), def.type(),
             ": give either `axis` or `order`, not both");
  int axis = 1;
  if (args.HasArgument("axis")) {
    axis = args.GetSingleArgument<int>("axis", 1);
  } else {
    const std::string order = args.GetSingleArgument<std::string>("order", "NCHW");
    HN_ENFORCE(order == "NCHW" || order == "NHWC", def.type(), ": order must be NCHW or NHWC, got '", order, "'");
    axis = order == "NCHW" ? 1 : 3;
  }
  return CanonicalAxisFor(def, axis, ndim, 0);
}

ConcatPlan ComputeConcatPlan(const caffe2::OperatorDef& def, const std::vector<std::vector<int64_t>>& in,
                             const std::vector<DataType>& dtypes) {
  const bool add_axis = ArgumentHelper(def).GetSingleArgument<int>("add_axis", 0) != 0;
  const auto& x0 = in[0];
  const int nd = static_cast<int>(x0.size());
  ConcatPlan p;
  p.axis = ConcatAxis(def, nd + (add_axis ? 1 : 0));
  for (size_t i = 0; i < in.size(); ++i) {
    HN_ENFORCE(dtypes[i] == dtypes[0], def.type(), ": input ", i, " ('", def.input(i), "') is ",
               DataTypeName(dtypes[i]), " but input 0 ('", def.input(0), "') is ", DataTypeName(dtypes[0]));
    bool ok = in[i].size() == x0.size();
    for (int d = 0; ok && d < nd; ++d) ok = in[i][d] == x0[d] || (!add_axis && d == p.axis);
    HN_ENFORCE(ok, def.type(), ": input ", i, " ('", def.input(i), "') has shape ", ShapeToString(in[i]),
               " but input 0 ('", def.input(0), "') has shape ", ShapeToString(x0), "; ",
               add_axis ? "with add_axis=1 all shapes must be equal"
                        : MakeString("they may differ only in dim ", p.axis));
    p.sizes.push_back(add_axis ? 1 : in[i][p.axis]);
  }
  p.outer = ProdDims(x0, 0, p.axis);
  p.after = ProdDims(x0, add_axis ? p.axis : p.axis + 1, x0.size());
  p.y_shape = x0;
  if (add_axis) {
    p.y_shape.insert(p.y_shape.begin() + p.axis, static_cast<int64_t>(in.size()));
  } else {
    int64_t total = 0;
    for (int64_t s : p.sizes) total += s;
    p.y_shape[p.axis] = total;
  }
  return p;
}

SplitPlan ComputeSplitPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                           const std::vector<int64_t>* split) {
  ArgumentHelper args(def);
  const bool add_axis = args.GetSingleArgument<int>("add_axis", 0) != 0;
  const int n = def.output_size();
  const int axis = ConcatAxis(def, static_cast<int>(x.size()));
  const int64_t dim = x[axis];
  SplitPlan p;
  HN_ENFORCE(!(split && args.HasArgument("split")), def.type(),
             ": give the sizes either as argument `split` or as input 1 ('", split ? def.input(1) : "", "'), not both");
  if (split) {
    p.sizes = *split;
  } else if (args.HasArgument("split")) {
    p.sizes = args.GetRepeatedArgument<int64_t>("split");
  } else {
    HN_ENFORCE(dim % n == 0, def.type(), ": input 0 ('", def.input(0), "') has ", dim, " elements along axis ", axis,
               " (shape ", ShapeToString(x), "), not divisible into ", n, " equal outputs; give `split`");
    p.sizes.assign(n, dim / n);
  }
  HN_ENFORCE(static_cast<int>(p.sizes.size()) == n, def.type(), ": ", p.sizes.size(), " split sizes ",
             ShapeToString(p.sizes), " for ", n, " outputs");
  int64_t total = 0;
  for (int64_t s : p.sizes) {
    HN_ENFORCE(s >= 0, def.type(), ": negative split size in ", ShapeToString(p.sizes));
    HN_ENFORCE(!add_axis || s == 1, def.type(), ": with add_axis=1 every split size must be 1, got ",
               ShapeToString(p.sizes));
    total += s;
  }
  HN_ENFORCE(total == dim, def.type(), ": split sizes ", ShapeToString(p.sizes), " sum to ", total, " but input 0 ('",
             def.input(0), "') of shape ", ShapeToString(x), " has ", dim, " along axis ", axis);
  p.outer = ProdDims(x, 0, axis);
  p.after = ProdDims(x, axis + 1, x.size());
  for (int64_t s : p.sizes) {
    std::vector<int64_t> shape = x;
    if (add_axis) shape.erase(shape.begin() + axis);
    else shape[axis] = s;
    p.shapes.push_back(std::move(shape));
  }
  return p;
}

OPERATOR_SCHEMA(Concat)
    .NumInputs(1, 1 << 30)
    .NumOutputs(2)
    .OutputsOnCPU({1})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<std::vector<int64_t>> shapes;
      std::vector<DataType> dtypes;
      for (const auto& t : in) {
        shapes.push_back(t.dims);
        dtypes.push_back(t.dtype);
      }
      const ConcatPlan p = ComputeConcatPlan(def, shapes, dtypes);
      return std::vector<TensorInfo>{TensorInfo::Of(p.y_shape, in[0].dtype),
                                     TensorInfo::Of({static_cast<int64_t>(in.size())}, DataType::Int32)};
    })
    .SetDoc("Concatenates along `axis` (or `order`); add_axis=1 stacks on a new axis. split_info (int32) on CPU.");
REGISTER_OP_COST(Concat, ElementwiseCostFn(0));  // bytes only
OPERATOR_SCHEMA(Split)
    .NumInputs(1, 2)
    .NumOutputs(1, 1 << 30)
    .InputsOnCPU({1})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out(def.output_size());
      if (in.size() > 1) return out;  // sizes are data
      const SplitPlan p = ComputeSplitPlan(def, in[0].dims, nullptr);
      for (int o = 0; o < def.output_size(); ++o) out[o] = TensorInfo::Of(p.shapes[o], in[0].dtype);
      return out;
    })
    .SetDoc("Splits along `axis` (or `order`) by arg `split`, input 1 (int32, CPU), or equally.");

REGISTER_CPU_OPERATOR(Concat, ConcatOp<CPUContext>);
REGISTER_CPU_OPERATOR(Split, SplitOp<CPUContext>);

class GetConcatGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> grads;
    for (int i = 0; i < Def().input_size(); ++i) grads.push_back(GI(i));
    std::vector<caffe2::Argument> args;
    for (const auto& a : Def().arg())
      if (a.name() == "axis" || a.name() == "order" || a.name() == "add_axis") args.push_back(a);
    return {GradientOp("Split", {GO(0), O(1)}, grads, args)};
  }
};
REGISTER_GRADIENT(Concat, GetConcatGradient);

class GetSplitGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> grads;
    for (int o = 0; o < Def().output_size(); ++o) {
      HN_ENFORCE(!GO(o).empty(), "Split: output ", o, " ('", O(o), "') has no gradient; Concat needs every piece");
      grads.push_back(GO(o));
    }
    std::vector<caffe2::Argument> args;
    for (const auto& a : Def().arg())
      if (a.name() == "axis" || a.name() == "order" || a.name() == "add_axis") args.push_back(a);
    const std::string gi = GI(0);
    return {GradientOp("Concat", grads, {gi, "_" + gi + "_dims"}, args)};
  }
};
REGISTER_GRADIENT(Split, GetSplitGradient);

}  // namespace hetnet
