// ResizeInterp(X, [roi], [scales], [sizes]) -> Y: ONNX Resize (opset 11-19) on the CPU, any rank,
// float / double / float16 X, modes nearest, linear and cubic. Separable, one axis at a time in
// float64 and cast to X's dtype at the end, as the ONNX reference (onnx.reference Resize) computes it.
// Which inputs are present: args roi_input, scales_input, sizes_input (input index, -1 = absent; the
// values are read on the host: roi and scales any float dtype, sizes int32/int64). An empty scales
// tensor counts as absent (opsets 11-12 pass one with sizes). Args as in ONNX: mode, coordinate_transformation_mode (half_pixel,
// half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize),
// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value, antialias, axes,
// keep_aspect_ratio_policy (stretch, not_larger, not_smaller).
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

// Per-axis geometry of one resize: the full-rank scales, output dims and roi (start, end per axis).
struct ResizeInterpPlan {
  std::vector<double> scale;
  std::vector<int64_t> out;
  std::vector<double> roi_start, roi_end;
};

// Builds the plan of `def` for input dims x from the given roi / scales / sizes (empty = absent).
ResizeInterpPlan MakeResizeInterpPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                      const std::vector<double>& roi, const std::vector<double>& scales,
                                      const std::vector<int64_t>& sizes);

class ResizeInterpOp final : public Operator<CPUContext> {
 public:
  ResizeInterpOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::vector<double> ReadReals(int arg_index, const char* what);
  std::string mode_, ctm_, nearest_mode_;
  double cubic_a_, extrapolation_;
  bool exclude_outside_, antialias_;
  int roi_input_, scales_input_, sizes_input_;
};

}  // namespace hetnet
