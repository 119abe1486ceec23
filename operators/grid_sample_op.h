// GridSample(X, grid) -> Y: ONNX's GridSample (opsets 16-22). X [N, C, D_1..D_r] (r >= 1 spatial
// dims), grid [N, O_1..O_r, r] of normalized coordinates in [-1, 1], the last dim in reverse order
// (x = the last spatial dim first); Y [N, C, O_1..O_r]. Args: mode "linear" (ONNX 16's "bilinear"),
// "nearest" (round half to even) or "cubic" ("bicubic"; Keys' kernel, alpha -0.75); padding_mode
// "zeros", "border" or "reflection" for samples outside the input; align_corners (1: -1 and 1 are the
// centres of the corner pixels; 0: their outer edges). Computed in float32 (float64 for float64)
// with the coordinates in float32, as ONNX's reference. float32/64. CPU only; no gradient.
//
// AffineGrid(theta, size) -> grid: ONNX's AffineGrid (opset 20), the sampling grid GridSample reads:
// size (int64 [N, C, H, W] or [N, C, D, H, W]) gives the output [N, H, W, 2] (or [N, D, H, W, 3]),
// each point theta[n] ([N, 2, 3] or [N, 3, 4]) times its homogeneous normalized coordinates (x, y[, z],
// 1), x along W; align_corners as in GridSample. float32/64. CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class GridSampleOp final : public Operator<CPUContext> {
 public:
  GridSampleOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T>
  void Compute();

  int mode_;     // 0 linear, 1 nearest, 2 cubic
  int padding_;  // 0 zeros, 1 border, 2 reflection
  bool align_corners_;
};

class AffineGridOp final : public Operator<CPUContext> {
 public:
  AffineGridOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), align_corners_(GetSingleArgument<int64_t>("align_corners", 0) != 0) {}
  void RunOnDevice() override;

 private:
  template <typename T>
  void Compute();

  bool align_corners_;
};

}  // namespace hetnet
