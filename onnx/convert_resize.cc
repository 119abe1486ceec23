// Pad: onto PadImage (4-D NCHW, the H and W dims only, constant parameters), other forms onto the CPU
// OnnxPad. Resize / Upsample onto ResizeNearest or ResizeInterp.
// Resize's nearest mode maps where it picks the same pixels as ours (out = floor(in * scale), input
// index floor(o / scale)): coordinate mode asymmetric with nearest_mode floor (Upsample's and opset
// 10's rule), or half_pixel / pytorch_half_pixel with round_prefer_floor / round_prefer_ceil and whole
// scale factors (there (o + 0.5) / s - 0.5 always rounds to floor(o / s)).
#include <cmath>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

// Pad forms PadImage (4-D float NCHW, H and W only, constant parameters) lacks: the CPU OnnxPad
// with the parameters as inputs (attributes of opsets < 11 become constants).
void OnnxPad(ConvertContext& c) {
  std::vector<std::string> ins{c.in(0)};
  if (c.opset() < 11) {
    const auto pads = c.Ints(c.opset() < 2 ? "paddings" : "pads");
    ConstTensor p;
    p.dtype = caffe2::TensorProto::INT64;
    p.dims = {static_cast<int64_t>(pads.size())};
    p.integer = pads;
    ins.push_back(c.AddConst(c.out(0) + "_pads", std::move(p)));
    ins.push_back(c.AddConst(c.out(0) + "_value", ConstTensor::Float({}, {c.Float("value", 0.f)})));
  } else {
    ins.push_back(c.in(1));
    if (c.has_in(2) || c.has_in(3))
      ins.push_back(c.has_in(2) ? c.in(2) : c.AddConst(c.out(0) + "_value", ConstTensor::Float({}, {0.0})));
    if (c.has_in(3)) ins.push_back(c.in(3));
  }
  AddArg(c.Emit("OnnxPad", ins, {c.out(0)}), "mode", c.Str("mode", "constant"));
  c.SetRank(c.out(0), c.Rank(c.in(0)));
}

// Whether PadImage can take this Pad: constant parameters, 4-D float input padded in H and W only
// by non-negative amounts, mode constant / reflect / edge.
bool PadImageFits(ConvertContext& c) {
  const std::string mode = c.Str("mode", "constant");
  const auto dt = c.Dtype(c.in(0));
  if (mode == "wrap" || (dt != caffe2::TensorProto::FLOAT && dt != caffe2::TensorProto::UNDEFINED)) return false;
  if (c.opset() >= 11)
    for (int i = 1; i < 4; ++i)
      if (c.has_in(i) && !c.Const(c.in(i))) return false;
  std::vector<int64_t> pads = c.opset() < 11 ? c.Ints(c.opset() < 2 ? "paddings" : "pads")
                                             : c.Const(c.in(1))->Ints("pads");
  if (c.opset() >= 11 && c.has_in(3)) {
    const int rank = c.Rank(c.in(0));
    const auto axes = c.Const(c.in(3))->Ints("axes");
    if (rank != 4 || pads.size() != 2 * axes.size()) return false;
    std::vector<int64_t> full(8, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] < -4 || axes[i] > 3) return false;
      const int64_t a = axes[i] < 0 ? axes[i] + 4 : axes[i];
      full[a] += pads[i];
      full[a + 4] += pads[i + axes.size()];
    }
    pads = full;
  }
  if (pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5]) return false;
  for (int64_t p : pads)
    if (p < 0) return false;
  return true;
}

void Pad(ConvertContext& c) {
  if (!PadImageFits(c)) return OnnxPad(c);
  std::vector<int64_t> pads;
  float value = 0.f;
  if (c.opset() < 11) {
    pads = c.Ints(c.opset() < 2 ? "paddings" : "pads");
    value = c.Float("value", 0.f);
  } else {
    pads = c.RequireConst(1, "pads").Ints("pads");
    if (c.has_in(2)) {
      const ConstTensor& v = c.RequireConst(2, "constant_value");
      if (v.numel() != 1) HN_THROW(kInvalidArgument, "Pad: constant_value must be a scalar");
      value = static_cast<float>(v.Reals()[0]);
    }
    if (c.has_in(3)) {  // axes (opset 18): pads for those axes only
      const auto axes = c.RequireConst(3, "axes").Ints("axes");
      const int rank = c.Rank(c.in(0));
      if (rank < 0) c.Refuse("axes need the input's rank, which the model does not declare");
      if (pads.size() != 2 * axes.size()) HN_THROW(kInvalidArgument, "Pad: pads must have 2 values per axis");
      std::vector<int64_t> full(2 * rank, 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = c.Axis(axes[i], rank, "axis");
        full[a] = pads[i];
        full[a + rank] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  const std::string mode = c.Str("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") c.Refuse("mode '" + mode + "' is not supported");
  if (pads.size() != 8) c.Refuse("only 4-D NCHW inputs are supported (pads for " + std::to_string(pads.size() / 2) + " dims)");
  for (int i : {0, 1, 4, 5})
    if (pads[i] != 0) c.Refuse("padding of the N or C dim is not supported (H and W only)");
  for (int64_t p : pads)
    if (p < 0) c.Refuse("negative pads (cropping) are not supported");
  auto& op = c.Emit("PadImage", {c.in(0)}, {c.out(0)});
  AddArg(op, "pads", std::vector<int64_t>{pads[2], pads[3], pads[6], pads[7]});
  AddArg(op, "mode", mode);
  if (mode == "constant") AddArgF(op, "value", value);
  c.SetRank(c.out(0), 4);
}

// Resize / Upsample onto ResizeInterp (CPU, any rank, every mode): the inputs it reads at run time.
void ResizeInterp(ConvertContext& c, bool upsample, const std::string& mode) {
  std::vector<std::string> ins = {c.in(0)};
  auto& op = c.Emit("ResizeInterp", {}, {c.out(0)});
  auto input = [&c, &ins, &op](int i, const char* arg) {
    if (c.num_inputs() <= i || !c.has_in(i)) return;
    AddArg(op, arg, static_cast<int64_t>(ins.size()));
    ins.push_back(c.in(i));
  };
  AddArg(op, "mode", mode);
  if (upsample && c.opset() < 9) {
    std::vector<double> v;
    for (float f : c.Floats("scales")) v.push_back(f);
    const int64_t n = static_cast<int64_t>(v.size());
    AddArg(op, "scales_input", static_cast<int64_t>(ins.size()));
    ins.push_back(c.AddConst(c.out(0) + "_scales", ConstTensor::Float({n}, std::move(v))));
  } else if (upsample || c.opset() < 11) {
    input(1, "scales_input");
  } else {
    input(1, "roi_input");
    input(2, "scales_input");
    input(3, "sizes_input");
    for (const char* a : {"coordinate_transformation_mode", "nearest_mode", "keep_aspect_ratio_policy"})
      if (c.Has(a)) AddArg(op, a, c.Str(a, ""));
    for (const char* a : {"cubic_coeff_a", "extrapolation_value"})
      if (c.Has(a)) AddArgF(op, a, c.Float(a, 0.f));
    for (const char* a : {"exclude_outside", "antialias"})
      if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
    if (c.Has("axes")) AddArg(op, "axes", c.Ints("axes"));
  }
  if (upsample || c.opset() < 11) {  // Upsample and Resize-10: index floor(o / scale)
    AddArg(op, "coordinate_transformation_mode", std::string("asymmetric"));
    if (mode == "nearest") AddArg(op, "nearest_mode", std::string("floor"));
  }
  for (const auto& i : ins) op.add_input(i);
  if (const int rank = c.Rank(c.in(0)); rank >= 0) c.SetRank(c.out(0), rank);
}

// Resize (opset >= 10) and Upsample (opsets 7-9). Nearest with constant scales or sizes on 4-D NCHW
// where our pixels are ONNX's (see the top) maps onto ResizeNearest; the rest of opset >= 11, and
// linear at any opset, onto ResizeInterp.
void Resize(ConvertContext& c, bool upsample) {
  const std::string mode = c.Str("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") c.Refuse("mode '" + mode + "' is not supported");
  if (mode == "cubic" && c.opset() < 11) c.Refuse("mode 'cubic' needs opset 11");
  const bool modern = !upsample && c.opset() >= 11;
  if (mode != "nearest") return ResizeInterp(c, upsample, mode);
  auto const_in = [&c](int i) { return c.num_inputs() > i && c.has_in(i) && c.Const(c.in(i)); };
  const bool runtime_scales = c.num_inputs() > 2 && c.has_in(2) && !const_in(2);
  if (modern && (c.Has("axes") || c.Str("keep_aspect_ratio_policy", "stretch") != "stretch" || runtime_scales))
    return ResizeInterp(c, upsample, mode);
  // Upsample-9 / Resize-10 with scales computed at run time (input 1 no constant): ResizeInterp reads them.
  if (!modern && c.opset() >= 9 && c.has_in(1) && !const_in(1)) return ResizeInterp(c, upsample, mode);
  std::vector<double> scales;
  const ConstTensor* sizes = nullptr;
  if (upsample && c.opset() < 9) {
    for (float f : c.Floats("scales")) scales.push_back(f);
  } else if (c.opset() < 11) {
    scales = c.RequireConst(1, "scales").Reals();
  } else {
    const ConstTensor* s = const_in(2) ? c.Const(c.in(2)) : nullptr;
    if (s && s->numel() > 0) scales = s->Reals();
    else if (const_in(3)) sizes = c.Const(c.in(3));
    else return ResizeInterp(c, upsample, mode);
  }
  if (sizes) {  // scales from the sizes and the input's dims
    const auto* d = c.Dims(c.in(0));
    const auto want = sizes->Ints("sizes");
    if (!d || d->size() != want.size()) return ResizeInterp(c, upsample, mode);
    for (size_t i = 0; i < want.size(); ++i) {
      if ((*d)[i] <= 0) return ResizeInterp(c, upsample, mode);
      scales.push_back(static_cast<double>(want[i]) / static_cast<double>((*d)[i]));
    }
  }
  const std::string ctm = modern ? c.Str("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  const std::string nearest = modern ? c.Str("nearest_mode", "round_prefer_floor") : "floor";
  const bool whole = scales.size() == 4 && scales[2] >= 1 && scales[3] >= 1 && scales[2] == std::floor(scales[2]) &&
                     scales[3] == std::floor(scales[3]);
  const bool same_pixels =
      scales.size() == 4 && scales[0] == 1 && scales[1] == 1 &&
      ((ctm == "asymmetric" && nearest == "floor") ||
       ((ctm == "half_pixel" || ctm == "pytorch_half_pixel") &&
        (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil") && whole));
  if (!same_pixels) {
    if (modern) return ResizeInterp(c, upsample, mode);
    if (scales.size() != 4) c.Refuse("only 4-D NCHW inputs are supported");
    if (scales[0] != 1 || scales[1] != 1) c.Refuse("scaling the N or C dim is not supported");
    c.Refuse("fractional scales are not supported");
  }
  auto& op = c.Emit("ResizeNearest", {c.in(0)}, {c.out(0)});
  AddArgF(op, "height_scale", static_cast<float>(scales[2]));
  AddArgF(op, "width_scale", static_cast<float>(scales[3]));
  c.SetRank(c.out(0), 4);
}

}  // namespace

void RegisterResizeConverters(ConverterRegistry& r) {
  r.Add("Pad", Pad);
  r.Add("Resize", [](ConvertContext& c) { Resize(c, false); });
  r.Add("Upsample", [](ConvertContext& c) { Resize(c, true); });
}

}  // namespace hetnet::onnxio
