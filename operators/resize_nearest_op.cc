#include "operators/resize_nearest_op.h"

#include <algorithm>
#include <cmath>

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

namespace {
ResizeGeom GeomFromScales(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, float hs, float ws) {
  const std::string who = def.type() + ": ";
  const std::string order = ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW");
  HN_CHECK_KIND(kUnsupported, order == "NCHW", who, "order '", order, "' is not supported (NCHW only)");
  HN_ENFORCE(x.size() == 4, who, "X must be 4-D NCHW, got ", ShapeToString(x));
  HN_ENFORCE(std::isfinite(hs) && std::isfinite(ws) && hs > 0 && ws > 0 && hs * ws < 1e6f, who,
             "height_scale and width_scale must be positive and finite (and not absurd), got ", hs, " and ", ws);
  ResizeGeom g;
  g.nc = x[0] * x[1];
  g.h = x[2];
  g.w = x[3];
  g.hs = hs;
  g.ws = ws;
  g.oh = static_cast<int64_t>(static_cast<float>(g.h) * hs);
  g.ow = static_cast<int64_t>(static_cast<float>(g.w) * ws);
  return g;
}
}  // namespace

ResizeGeom MakeResizeGeom(OperatorBase* op, const std::vector<int64_t>& x, int scales_input, DeviceContext* ctx) {
  float hs = op->GetSingleArgument<float>("height_scale", 1.f), ws = op->GetSingleArgument<float>("width_scale", 1.f);
  if (scales_input >= 0) {
    const Tensor& s = op->InputTensor(scales_input);
    HN_ENFORCE(s.dtype() == DataType::Float && s.ndim() == 1 && s.numel() == 2, op->type(), ": input ", scales_input,
               " ('", op->def().input(scales_input), "') must be 2 float32 values [height_scale, width_scale], got ",
               DataTypeName(s.dtype()), " ", s.ShapeString());
    float v[2];
    ctx->CopyBytes(sizeof(v), s.data<float>(), s.device(), v, Device::CPU());
    ctx->FinishDeviceComputation();
    hs = v[0];
    ws = v[1];
  }
  return GeomFromScales(op->def(), x, hs, ws);
}

template <>
void ResizeNearestForward<CPUContext>(const ResizeGeom& g, const float* x, float* y, CPUContext*) {
  const int64_t total = g.nc * g.oh * g.ow;
  for (int64_t t = 0; t < total; ++t) y[t] = x[ResizeSourceOffset(t, g)];
}

template <>
void ResizeNearestBackward<CPUContext>(const ResizeGeom& g, const float* dy, float* dx, CPUContext*) {
  std::fill(dx, dx + g.nc * g.h * g.w, 0.f);
  const int64_t total = g.nc * g.oh * g.ow;
  for (int64_t t = 0; t < total; ++t) dx[ResizeSourceOffset(t, g)] += dy[t];
}

OPERATOR_SCHEMA(ResizeNearest)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .InputsOnCPU({1})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known || in.size() > 1) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      ArgumentHelper a(def);
      const ResizeGeom g = GeomFromScales(def, in[0].dims, a.GetSingleArgument<float>("height_scale", 1.f),
                                          a.GetSingleArgument<float>("width_scale", 1.f));
      return std::vector<TensorInfo>{TensorInfo::Of({in[0].dims[0], in[0].dims[1], g.oh, g.ow}, DataType::Float)};
    })
    .SetDoc("ResizeNearest(X NCHW, [scales]) -> Y: nearest-neighbour resize by height_scale/width_scale (args, or "
            "input scales = [height_scale, width_scale]). Gradient: ResizeNearestGradient(dY, X, [scales]).");
OPERATOR_SCHEMA(ResizeNearestGradient)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .InputsOnCPU({2})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[1]};
    });
REGISTER_CPU_OPERATOR(ResizeNearest, ResizeNearestOp<CPUContext>);
REGISTER_CPU_OPERATOR(ResizeNearestGradient, ResizeNearestGradientOp<CPUContext>);

namespace {
class GetResizeNearestGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> ins{GO(0), I(0)};
    if (Def().input_size() == 2) ins.push_back(I(1));
    auto op = GradientOp("ResizeNearestGradient", ins, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(ResizeNearest, GetResizeNearestGradient);

}  // namespace hetnet
