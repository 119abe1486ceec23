// Exporters of the loss operators that deploy nets keep: SoftmaxWithLoss.
#include "core/error.h"
#include "onnx/export_context.h"

namespace hetnet::onnxio::exporter {

namespace {

std::string ReduceSumAxis1(OpExport& op, const std::string& x) {
  const std::string y = op.Temp("row_sum");
  onnx::NodeProto* n = op.g.Node("ReduceSum", {x}, {y});
  if (op.opset() >= 13) {
    n->add_input(op.g.Int64s(y + "_axes", {1}));
  } else {
    SetAttr(n, "axes", std::vector<int64_t>{1});
  }
  return y;
}

// SoftmaxWithLoss(X, label[, weights]) -> softmax, loss, Caffe2's formula written out rather than
// ONNX's SoftmaxCrossEntropyLoss, so that the 1e-20 floor under the probabilities is the same:
// X as [N, D] at `axis`; l_i = -log(max(p_i[label_i], 1e-20)) (or -sum_j label_ij log(max(p_ij, 1e-20))
// with label_prob=1); loss = scale * sum_i w_i l_i / sum_i w_i (w = 1 without weights), a 0-d tensor.
void ExportSoftmaxWithLoss(OpExport& op) {
  if (op.opset() < 11) op.Unsupported("needs opset 11 for GatherElements");
  const bool label_prob = op.args.GetSingleArgument<int>("label_prob", 0) != 0;
  const float scale = op.args.GetSingleArgument<float>("scale", 1.f);
  const int rank = op.in_rank(0);
  int axis = op.args.GetSingleArgument<int>("axis", 1);
  if (axis < 0) axis += rank;
  const auto& x = op.in_facts[0].shape;
  int64_t n = 1, d = 1;
  for (int i = 0; i < rank; ++i) (i < axis ? n : d) *= x[i];

  std::string x2d = op.in[0];
  if (!(rank == 2 && axis == 1)) {
    x2d = op.Temp("x2d");
    SetAttr(op.g.Node("Flatten", {op.in[0]}, {x2d}), "axis", int64_t{axis});
  }
  const bool reshape_back = op.out_facts[0].shape.size() != 2;
  const std::string p = reshape_back ? op.Temp("p2d") : op.out[0];
  SetAttr(op.g.Node("Softmax", {x2d}, {p}), "axis", int64_t{op.opset() >= 13 ? -1 : 1});
  if (reshape_back) op.ReshapeTo(p, op.out[0], op.out_facts[0].shape);
  if (op.out.size() < 2) return;

  const std::string floored = op.Temp("p_floor"), logp = op.Temp("log_p");
  op.g.Node("Max", {p, op.g.Scalar(floored + "_min", DataType::Float, 1e-20)}, {floored});
  op.g.Node("Log", {floored}, {logp});
  std::string picked;  // [N, 1]: log p of the true class (or the label-weighted sum)
  if (label_prob) {
    const std::string target = op.Temp("target"), weighted = op.Temp("weighted_log_p");
    op.ReshapeTo(op.in[1], target, {n, d});
    op.g.Node("Mul", {logp, target}, {weighted});
    picked = ReduceSumAxis1(op, weighted);
  } else {
    const std::string label64 = op.Temp("label64"), index = op.Temp("label_index");
    SetAttr(op.g.Node("Cast", {op.in[1]}, {label64}), "to", int64_t{onnx::TensorProto::INT64});
    op.ReshapeTo(label64, index, {n, 1});
    picked = op.Temp("picked_log_p");
    SetAttr(op.g.Node("GatherElements", {logp, index}, {picked}), "axis", int64_t{1});
  }
  std::string mean = op.Temp("mean_log_p");
  if (op.in.size() > 2) {
    const std::string w = op.ReshapedInput(2, {n, 1}, "w");
    const std::string wl = op.Temp("w_log_p"), num = op.Temp("num"), den = op.Temp("den");
    op.g.Node("Mul", {picked, w}, {wl});
    SetAttr(op.g.Node("ReduceSum", {wl}, {num}), "keepdims", int64_t{0});
    SetAttr(op.g.Node("ReduceSum", {w}, {den}), "keepdims", int64_t{0});
    op.g.Node("Div", {num, den}, {mean});
  } else {
    SetAttr(op.g.Node("ReduceMean", {picked}, {mean}), "keepdims", int64_t{0});
  }
  op.g.Node("Mul", {mean, op.g.Scalar(op.out[1] + "_neg_scale", DataType::Float, -scale)}, {op.out[1]});
}

}  // namespace

void AddLossExporters(ExporterTable& t) { t["SoftmaxWithLoss"] = ExportSoftmaxWithLoss; }

}  // namespace hetnet::onnxio::exporter
