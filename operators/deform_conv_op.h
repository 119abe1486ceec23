// DeformConv(X, W, offset, [B], [mask]) -> Y: ONNX's DeformConv (opsets 19-22), 2-D. Each kernel tap
// (kh, kw) of output (i, j) reads X bilinearly (zero outside) at (i * stride_h - pad_top + kh * dil_h
// + offset_h, j * stride_w - pad_left + kw * dil_w + offset_w), times mask (default 1), times W;
// plus B. X [N, C, H, W], W [OC, C / group, kH, kW], offset [N, offset_group * kH * kW * 2, OH, OW]
// (per offset group and tap: dh, dw), mask [N, offset_group * kH * kW, OH, OW]; Y [N, OC, OH, OW]
// with OH/OW from offset (checked against the conv arithmetic). Args: kernel_shape, strides, pads
// (top, left, bottom, right), dilations, group, offset_group, has_bias, has_mask (the optional inputs
// present in that order). float32/64. CPU only; no gradient.
#pragma once

#include <vector>

#include "core/operator.h"

namespace hetnet {

class DeformConvOp final : public Operator<CPUContext> {
 public:
  DeformConvOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  template <typename T>
  void Compute();

  std::vector<int64_t> strides_, pads_, dilations_;
  int64_t group_, offset_group_;
  bool has_bias_, has_mask_;
};

}  // namespace hetnet
