#include "operators/pad_image_op.h"

#include <algorithm>

#include "core/argument.h"
#include "core/gradient.h"
#include "operators/conv_pool_shape.h"

namespace hetnet {

PadGeom MakePadGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& shape, bool from_output) {
  // Conv kind: the kernel may be absent (PadImage ignores it, as Caffe2 did).
  const ConvPoolArgs a = ParseConvPoolArgs(def, ConvPoolKind::Conv);
  const std::string who = def.type() + ": ";
  HN_ENFORCE(a.legacy_pad == LegacyPadding::NOTSET, who, "legacy_pad is not supported; give explicit pads");
  HN_ENFORCE(a.stride[0] == 1 && a.stride[1] == 1 && a.dilation[0] == 1 && a.dilation[1] == 1, who,
             "stride and dilation must be 1");
  HN_ENFORCE(shape.size() == 4, who, "input 0 ('", def.input(0), "') must be 4-D NCHW, got ", ShapeToString(shape));
  for (int p : a.pads) HN_ENFORCE(p >= 0, who, "pads must be >= 0, got ", p);
  ArgumentHelper args(def);
  const std::string mode = args.GetSingleArgument<std::string>("mode", "constant");
  PadGeom g;
  g.mode = mode == "constant" ? PadMode::kConstant : mode == "reflect" ? PadMode::kReflect : PadMode::kEdge;
  HN_ENFORCE(mode == "constant" || mode == "reflect" || mode == "edge", who, "mode '", mode,
             "' is not one of constant, reflect, edge");
  g.value = args.GetSingleArgument<float>("value", 0.f);
  g.nc = shape[0] * shape[1];
  g.pt = a.pads[0];
  g.pl = a.pads[1];
  const int64_t dh = int64_t{a.pads[0]} + a.pads[2], dw = int64_t{a.pads[1]} + a.pads[3];  // int64: no overflow
  if (from_output) {
    g.oh = shape[2];
    g.ow = shape[3];
    g.h = g.oh - dh;
    g.w = g.ow - dw;
    HN_ENFORCE(g.h >= 0 && g.w >= 0, who, "input 0 ('", def.input(0), "') of shape ", ShapeToString(shape),
               " is smaller than the pads");
  } else {
    g.h = shape[2];
    g.w = shape[3];
    g.oh = g.h + dh;
    g.ow = g.w + dw;
  }
  if (g.mode != PadMode::kConstant && g.nc * g.oh * g.ow > 0)
    HN_ENFORCE(g.h > 0 && g.w > 0, who, "mode '", mode, "' needs a non-empty image to read from");
  if (g.mode == PadMode::kReflect)
    HN_ENFORCE(std::max(a.pads[0], a.pads[2]) < g.h && std::max(a.pads[1], a.pads[3]) < g.w, who,
               "mode 'reflect' needs pads smaller than the image (", g.h, "x", g.w, ")");
  return g;
}

template <>
void PadImageForward<CPUContext>(const PadGeom& g, const float* x, float* y, CPUContext*) {
  const int64_t total = g.nc * g.oh * g.ow;
  for (int64_t t = 0; t < total; ++t) {
    const int64_t s = PadSourceOffset(t, g);
    y[t] = s < 0 ? g.value : x[s];
  }
}

template <>
void PadImageBackward<CPUContext>(const PadGeom& g, const float* dy, float* dx, CPUContext*) {
  std::fill(dx, dx + g.nc * g.h * g.w, 0.f);
  const int64_t total = g.nc * g.oh * g.ow;
  for (int64_t t = 0; t < total; ++t) {
    const int64_t s = PadSourceOffset(t, g);
    if (s >= 0) dx[s] += dy[t];
  }
}

OPERATOR_SCHEMA(PadImage)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      const PadGeom g = MakePadGeom(def, in[0].dims, false);
      return std::vector<TensorInfo>{TensorInfo::Of({in[0].dims[0], in[0].dims[1], g.oh, g.ow}, DataType::Float)};
    })
    .SetDoc("PadImage(X NCHW) -> Y: pads H and W (pad | pad_t/pad_l/pad_b/pad_r | pads=[t,l,b,r]); mode constant "
            "(arg value), reflect or edge. Gradient: PadImageGradient(dY) -> dX.");
OPERATOR_SCHEMA(PadImageGradient).NumInputs(1).NumOutputs(1);
REGISTER_CPU_OPERATOR(PadImage, PadImageOp<CPUContext>);
REGISTER_CPU_OPERATOR(PadImageGradient, PadImageGradientOp<CPUContext>);

namespace {
class GetPadImageGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp("PadImageGradient", {GO(0)}, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(PadImage, GetPadImageGradient);

}  // namespace hetnet
