// Converters of ONNX's image sampling ops onto the CPU hetnet operators of the same names: GridSample
// (opsets 16-22; operators/grid_sample_op: mode, padding_mode and align_corners passed on, opset 16's
// bilinear / bicubic are the kernel's linear / cubic), AffineGrid (opset 20; same file), CenterCropPad
// (opset 18; operators/center_crop_pad_op), DeformConv (opsets 19-22, 2-D; operators/deform_conv_op:
// bilinear sampling at offsets), RoiAlign (opsets 10-22; operators/roi_align_op; before opset 16 the
// rois are not shifted by half a pixel). Registered from RegisterNnConverters.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

void RegisterGridSampleConverters(ConverterRegistry& r) {
  r.Add("GridSample", 16, kNewestOpset, [](ConvertContext& c) {
    if (!c.has_in(0) || !c.has_in(1)) c.Refuse("inputs X and grid are required");
    auto& op = c.Emit("GridSample", {c.in(0), c.in(1)}, {c.out(0)});
    const std::string mode = c.Str("mode", c.opset() < 20 ? "bilinear" : "linear");
    if (mode != "linear" && mode != "bilinear" && mode != "nearest" && mode != "cubic" && mode != "bicubic")
      c.Refuse("mode '" + mode + "' is not linear, nearest or cubic");
    AddArg(op, "mode", mode);
    AddArg(op, "padding_mode", c.Str("padding_mode", "zeros"));
    AddArg(op, "align_corners", c.Int("align_corners", 0));
    if (c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), c.Rank(c.in(0)));
  });
  r.Add("AffineGrid", 20, kNewestOpset, [](ConvertContext& c) {
    if (!c.has_in(0) || !c.has_in(1)) c.Refuse("inputs theta and size are required");
    AddArg(c.Emit("AffineGrid", {c.in(0), c.in(1)}, {c.out(0)}), "align_corners", c.Int("align_corners", 0));
  });
  r.Add("DeformConv", 19, kNewestOpset, [](ConvertContext& c) {
    if (!c.has_in(0) || !c.has_in(1) || !c.has_in(2)) c.Refuse("inputs X, W and offset are required");
    if (c.Rank(c.in(0)) >= 0 && c.Rank(c.in(0)) != 4) c.Refuse("only 2-D (4-D X) is supported");
    std::vector<std::string> ins{c.in(0), c.in(1), c.in(2)};
    for (int i = 3; i < 5; ++i)
      if (c.has_in(i)) ins.push_back(c.in(i));
    auto& op = c.Emit("DeformConv", ins, {c.out(0)});
    AddArg(op, "has_bias", int64_t{c.has_in(3)});
    AddArg(op, "has_mask", int64_t{c.has_in(4)});
    for (const char* a : {"strides", "pads", "dilations"})
      if (c.Has(a)) AddArg(op, a, c.Ints(a));
    for (const char* a : {"group", "offset_group"})
      if (c.Has(a)) AddArg(op, a, c.Int(a, 1));
    c.SetRank(c.out(0), 4);
  });
  r.Add("RoiAlign", 10, kNewestOpset, [](ConvertContext& c) {
    for (int i = 0; i < 3; ++i)
      if (!c.has_in(i)) c.Refuse("inputs X, rois and batch_indices are required");
    auto& op = c.Emit("RoiAlign", {c.in(0), c.in(1), c.in(2)}, {c.out(0)});
    AddArg(op, "coordinate_transformation_mode",
           c.Str("coordinate_transformation_mode", c.opset() < 16 ? "output_half_pixel" : "half_pixel"));
    AddArg(op, "mode", c.Str("mode", "avg"));
    for (const char* a : {"output_height", "output_width"}) AddArg(op, a, c.Int(a, 1));
    AddArg(op, "sampling_ratio", c.Int("sampling_ratio", 0));
    AddArgF(op, "spatial_scale", c.Float("spatial_scale", 1.f));
    c.SetRank(c.out(0), 4);
  });
  r.Add("CenterCropPad", 18, kNewestOpset, [](ConvertContext& c) {
    if (!c.has_in(0) || !c.has_in(1)) c.Refuse("inputs input_data and shape are required");
    auto& op = c.Emit("CenterCropPad", {c.in(0), c.in(1)}, {c.out(0)});
    if (c.Has("axes")) AddArg(op, "axes", c.Ints("axes"));
    if (c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), c.Rank(c.in(0)));
  });
}

}  // namespace hetnet::onnxio
