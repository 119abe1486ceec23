// NonMaxSuppression(boxes, scores[, max_output_boxes_per_class[, iou_threshold[, score_threshold]]])
// -> selected_indices: ONNX's greedy NMS. boxes float32 [B, N, 4] (arg center_point_box 0: corners
// [y1, x1, y2, x2] in either order; 1: [x_center, y_center, width, height]), scores float32 [B, C, N].
// Per batch and class, boxes with score > score_threshold (when given) are taken by descending score
// (lower index first on ties) unless their IoU with a box already taken exceeds iou_threshold
// (default 0), up to max_output_boxes_per_class (int64, default 0: none). Output int64 [K, 3] rows
// (batch, class, box), batch- then class-major. CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class NonMaxSuppressionOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
