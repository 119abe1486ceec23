#include "operators/nms_op.h"

#include <algorithm>
#include <numeric>

#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

struct Box {
  float x1, y1, x2, y2;
};

Box ReadBox(const float* b, bool center) {
  if (center) return {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

float IoU(const Box& a, const Box& b) {
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1), h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0.f;
  const float inter = w * h, area_a = (a.x2 - a.x1) * (a.y2 - a.y1), area_b = (b.x2 - b.x1) * (b.y2 - b.y1);
  const float uni = area_a + area_b - inter;
  return uni <= 0 ? 0.f : inter / uni;
}

bool Given(const OperatorBase& op, int i) { return op.InputSize() > i && !op.def().input(i).empty(); }

}  // namespace

void NonMaxSuppressionOp::RunOnDevice() {
  const Tensor &B = Input(0), &S = Input(1);
  for (int i = 0; i < 2; ++i)
    HN_ENFORCE(Input(i).dtype() == DataType::Float, type(), ": input ", i, " ('", def().input(i), "') is ",
               DataTypeName(Input(i).dtype()), "; float32 is required");
  HN_ENFORCE(B.ndim() == 3 && B.dim(2) == 4, type(), ": boxes (input 0, '", def().input(0), "') has shape ",
             B.ShapeString(), "; [batches, boxes, 4] is required");
  HN_ENFORCE(S.ndim() == 3 && S.dim(0) == B.dim(0) && S.dim(2) == B.dim(1), type(), ": scores (input 1, '",
             def().input(1), "') has shape ", S.ShapeString(), "; [", B.dim(0), ", classes, ", B.dim(1), "] is required");
  const int64_t max_out = Given(*this, 2) ? static_cast<int64_t>(ScalarInput(*this, 2)) : 0;
  const float iou_threshold = Given(*this, 3) ? static_cast<float>(ScalarInput(*this, 3)) : 0.f;
  const bool has_score_threshold = Given(*this, 4);
  const float score_threshold = has_score_threshold ? static_cast<float>(ScalarInput(*this, 4)) : 0.f;
  const bool center = GetSingleArgument<int>("center_point_box", 0) != 0;
  const int64_t batches = B.dim(0), n = B.dim(1), classes = S.dim(1);
  std::vector<Box> boxes(n);
  std::vector<int64_t> selected;  // flattened rows of 3
  std::vector<int64_t> order(n), taken;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) boxes[i] = ReadBox(B.data<float>() + (b * n + i) * 4, center);
    for (int64_t c = 0; c < classes; ++c) {
      const float* score = S.data<float>() + (b * classes + c) * n;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [score](int64_t x, int64_t y) { return score[x] > score[y]; });
      taken.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(taken.size()) >= max_out) break;
        if (has_score_threshold && !(score[i] > score_threshold)) break;  // sorted: the rest are lower
        bool keep = true;
        for (int64_t t : taken) keep &= !(IoU(boxes[i], boxes[t]) > iou_threshold);
        if (!keep) continue;
        taken.push_back(i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  Tensor* Y = Output(0, {static_cast<int64_t>(selected.size() / 3), 3}, DataType::Int64);
  std::copy(selected.begin(), selected.end(), Y->mutable_data<int64_t>());
}

OPERATOR_SCHEMA(NonMaxSuppression).NumInputs(2, 5).NumOutputs(1)
    .SetDoc("ONNX's NonMaxSuppression(boxes, scores[, max_output_boxes_per_class, iou_threshold, score_threshold]) "
            "-> selected_indices int64 [K, 3]; arg center_point_box. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(NonMaxSuppression, NonMaxSuppressionOp);

}  // namespace hetnet
