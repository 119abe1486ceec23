#include "operators/transpose_op.h"

#include "core/gradient.h"

namespace hetnet {

namespace {
template <typename T>
void TransposeLoop(const StridedIndex& src, int64_t n, const void* x, void* y) {
  const T* xs = static_cast<const T*>(x);
  T* ys = static_cast<T*>(y);
  for (int64_t i = 0; i < n; ++i) ys[i] = xs[src.Offset(i)];
}
}  // namespace

template <>
void TransposeKernel<CPUContext>(const StridedIndex& src, int64_t n, size_t item_size, const void* x, void* y,
                                 CPUContext*) {
  switch (item_size) {
    case 1: return TransposeLoop<uint8_t>(src, n, x, y);
    case 2: return TransposeLoop<uint16_t>(src, n, x, y);
    case 4: return TransposeLoop<uint32_t>(src, n, x, y);
    case 8: return TransposeLoop<uint64_t>(src, n, x, y);
    default: HN_THROW(kUnsupported, "Transpose: unsupported element size ", item_size);
  }
}

OPERATOR_SCHEMA(Transpose)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const auto axes = TransposeAxes(def, static_cast<int>(in[0].dims.size()));
      return std::vector<TensorInfo>{TensorInfo::Of(TransposeShape(in[0].dims, axes), in[0].dtype)};
    })
    .SetDoc("Permutes the dims by `axes` (default: reversed).");

REGISTER_CPU_OPERATOR(Transpose, TransposeOp<CPUContext>);

class GetTransposeGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const std::vector<int> axes = ArgumentHelper(Def()).GetRepeatedArgument<int>("axes");
    std::vector<caffe2::Argument> args;
    if (!axes.empty()) {
      std::vector<int64_t> inv(axes.size());
      for (size_t i = 0; i < axes.size(); ++i) {
        HN_ENFORCE(axes[i] >= 0 && axes[i] < static_cast<int>(axes.size()), "Transpose: bad axes for the gradient");
        inv[axes[i]] = static_cast<int64_t>(i);
      }
      caffe2::Argument a;
      a.set_name("axes");
      for (int64_t v : inv) a.add_ints(v);
      args.push_back(a);
    }
    return {GradientOp("Transpose", {GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(Transpose, GetTransposeGradient);

}  // namespace hetnet
