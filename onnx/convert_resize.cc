// Pad (onto PadImage) and Resize / Upsample (onto ResizeNearest): 4-D NCHW, the H and W dims only.
// Resize's nearest mode maps where it picks the same pixels as ours (out = floor(in * scale), input
// index floor(o / scale)): coordinate mode asymmetric with nearest_mode floor (Upsample's and opset
// 10's rule), or half_pixel / pytorch_half_pixel with round_prefer_floor / round_prefer_ceil and whole
// scale factors (there (o + 0.5) / s - 0.5 always rounds to floor(o / s)).
#include <cmath>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

void Pad(ConvertContext& c) {
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

// Resize (opset >= 10) and Upsample (opsets 7-9).
void Resize(ConvertContext& c, bool upsample) {
  const std::string mode = c.Str("mode", "nearest");
  if (mode != "nearest") c.Refuse("mode '" + mode + "' is not supported (nearest only)");
  std::vector<double> scales;
  const ConstTensor* sizes = nullptr;
  if (upsample && c.opset() < 9) {
    for (float f : c.Floats("scales")) scales.push_back(f);
  } else if (c.opset() < 11) {
    scales = c.RequireConst(1, "scales").Reals();
  } else {
    if (c.Has("axes")) c.Refuse("the axes attribute is not supported");
    if (c.Str("keep_aspect_ratio_policy", "stretch") != "stretch") c.Refuse("keep_aspect_ratio_policy is not supported");
    const ConstTensor* s = c.has_in(2) ? &c.RequireConst(2, "scales") : nullptr;
    if (s && s->numel() > 0) scales = s->Reals();
    else if (c.has_in(3)) sizes = &c.RequireConst(3, "sizes");
    else HN_THROW(kInvalidArgument, "Resize: give scales or sizes");
  }
  if (sizes) {  // scales from the sizes and the input's dims
    const auto* d = c.Dims(c.in(0));
    const auto want = sizes->Ints("sizes");
    if (!d || d->size() != want.size()) c.Refuse("sizes need the input's dims, which the model does not declare");
    for (size_t i = 0; i < want.size(); ++i) {
      if ((*d)[i] <= 0) c.Refuse("sizes need the input's dims, which the model does not declare");
      scales.push_back(static_cast<double>(want[i]) / static_cast<double>((*d)[i]));
    }
  }
  if (scales.size() != 4) c.Refuse("only 4-D NCHW inputs are supported");
  if (scales[0] != 1 || scales[1] != 1) c.Refuse("scaling the N or C dim is not supported");
  const std::string ctm = c.opset() >= 11 ? c.Str("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  const std::string nearest = c.opset() >= 11 ? c.Str("nearest_mode", "round_prefer_floor") : "floor";
  const bool whole = scales[2] >= 1 && scales[3] >= 1 && scales[2] == std::floor(scales[2]) &&
                     scales[3] == std::floor(scales[3]);
  const bool same_pixels =
      (ctm == "asymmetric" && nearest == "floor") ||
      ((ctm == "half_pixel" || ctm == "pytorch_half_pixel") &&
       (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil") && whole);
  if (!same_pixels)
    c.Refuse("coordinate_transformation_mode " + ctm + " with nearest_mode " + nearest +
             (whole ? "" : " and fractional scales") + " is not supported");
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
