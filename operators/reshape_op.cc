#include "operators/reshape_op.h"

#include <algorithm>

#include "core/checked_size.h"
#include "core/gradient.h"
#include "core/reduced_precision.h"

namespace hetnet {

std::vector<int64_t> ComputeReshapeShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& requested) {
  const int64_t in_numel = CheckedNumel(in, "Reshape: input 0");
  // allowzero=1 (ONNX's): a 0 in the new shape is an empty dim, not a copy of the input's.
  const bool allowzero = ArgumentHelper(def).GetSingleArgument<int>("allowzero", 0) != 0;
  std::vector<int64_t> out = requested;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && allowzero) {
      HN_ENFORCE(std::find(out.begin(), out.end(), -1) == out.end(), "Reshape: new shape ", ShapeToString(requested),
                 " has both 0 and -1, which allowzero=1 forbids");
    } else if (out[i] == 0) {
      HN_ENFORCE(i < in.size(), "Reshape: new shape ", ShapeToString(requested), " has 0 (copy) at dim ", i,
                 " but input 0 ('", def.input(0), "') has shape ", ShapeToString(in));
      out[i] = in[i];
    } else if (out[i] == -1) {
      HN_ENFORCE(infer < 0, "Reshape: new shape ", ShapeToString(requested), " has more than one -1");
      infer = static_cast<int>(i);
      continue;
    } else {
      HN_ENFORCE(out[i] > 0, "Reshape: new shape ", ShapeToString(requested), " has an invalid dim ", out[i]);
    }
    if (out[i] != 0 && (__builtin_mul_overflow(known, out[i], &known) || known > kMaxElements))
      HN_THROW(kInvalidArgument, "Reshape: new shape ", ShapeToString(requested), " for input 0 ('", def.input(0),
               "') has too many elements (the product of its dims overflows)");
    if (out[i] == 0) known = 0;
  }
  if (infer >= 0) {
    HN_ENFORCE(known != 0 ? in_numel % known == 0 : in_numel == 0, "Reshape: input 0 ('", def.input(0),
               "') of shape ", ShapeToString(in), " cannot be reshaped to ", ShapeToString(requested));
    HN_ENFORCE(known != 0, "Reshape: cannot infer the -1 dim of ", ShapeToString(requested), " for input 0 ('",
               def.input(0), "') of shape ", ShapeToString(in), " (the other dims multiply to 0)");
    out[infer] = in_numel / known;
  } else {
    HN_ENFORCE(known == in_numel, "Reshape: input 0 ('", def.input(0), "') of shape ", ShapeToString(in), " has ",
               in_numel, " elements but the new shape ", ShapeToString(requested), " has ", known);
  }
  return out;
}

OPERATOR_SCHEMA(Reshape)
    .NumInputs(1, 2)
    .NumOutputs(2)
    .AllowInplace({{0, 0}})
    .InputsOnCPU({1})
    .OutputsOnCPU({1})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out(2);
      out[1] = TensorInfo::Of({static_cast<int64_t>(in[0].dims.size())}, DataType::Int64);
      ArgumentHelper args(def);
      if (def.input_size() == 1 && args.HasArgument("shape"))
        out[0] = TensorInfo::Of(ComputeReshapeShape(def, in[0].dims, args.GetRepeatedArgument<int64_t>("shape")),
                                in[0].dtype);
      return out;
    })
    .SetDoc("Reshape to arg `shape` or the 1-D int64/int32 input 1 (0 copies a dim, or with arg allowzero=1 "
            "is an empty dim; -1 infers one); output 1 is the old shape (int64, CPU).");
OPERATOR_SCHEMA(Flatten)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const int axis = ArgumentHelper(def).GetSingleArgument<int>("axis", 1);
      const auto& d = in[0].dims;
      HN_ENFORCE(axis >= 0 && axis <= static_cast<int>(d.size()), "Flatten: axis ", axis,
                 " is out of range for input 0 ('", def.input(0), "') of shape ", ShapeToString(d));
      int64_t a = 1, b = 1;
      for (int i = 0; i < static_cast<int>(d.size()); ++i) (i < axis ? a : b) *= d[i];
      return std::vector<TensorInfo>{TensorInfo::Of({a, b}, in[0].dtype)};
    })
    .SetDoc("Flattens to 2-D at `axis` (default 1).");
OPERATOR_SCHEMA(ResizeLike)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[1].dims, in[0].dtype)};
    });

REGISTER_CPU_OPERATOR(Reshape, ReshapeOp<CPUContext>);
REGISTER_CPU_OPERATOR(Flatten, FlattenOp<CPUContext>);
REGISTER_REDUCED_PRECISION_KERNEL(Reshape, CPU, "", NarrowReshapeKernel());
REGISTER_REDUCED_PRECISION_KERNEL(Flatten, CPU, "", NarrowReshapeKernel());
REGISTER_CPU_OPERATOR(ResizeLike, ResizeLikeOp<CPUContext>);

class GetReshapeGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const std::string gi = GI(0);
    return {GradientOp("Reshape", {GO(0), O(1)}, {gi, "_" + gi + "_dims"})};
  }
};
REGISTER_GRADIENT(Reshape, GetReshapeGradient);

class GetFlattenGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("ResizeLike", {GO(0), I(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(Flatten, GetFlattenGradient);
NO_GRADIENT(ResizeLike);

}  // namespace hetnet
