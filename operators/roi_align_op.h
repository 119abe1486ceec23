// RoiAlign(X, rois, batch_indices) -> Y: ONNX's RoiAlign (opsets 10-22). X [N, C, H, W], rois [R, 4]
// (x1, y1, x2, y2 in X's coordinates before spatial_scale), batch_indices int64 [R] (each in [0, N));
// Y [R, C, output_height, output_width]. Each output bin averages (mode "avg") or takes the maximum
// ("max": of the largest weighted corner, as ONNX's reference and onnxruntime) of
// sampling_ratio^2 bilinear samples (0: ceil(roi size / bins) per axis); coordinate_transformation_mode
// "half_pixel" shifts the rois by -0.5 pixel, "output_half_pixel" (opset 10's behaviour) does not
// and makes rois at least one pixel. float32/64. CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class RoiAlignOp final : public Operator<CPUContext> {
 public:
  RoiAlignOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T>
  void Compute();

  bool half_pixel_, max_;
  int64_t out_h_, out_w_, sampling_ratio_;
  float spatial_scale_;
};

}  // namespace hetnet
