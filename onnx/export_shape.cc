// Exporters of the shape operators: Concat, Split, Reshape, Flatten, Transpose, Squeeze, ExpandDims,
// ChannelShuffle, ResizeLike.
#include "core/error.h"
#include "onnx/export_context.h"

namespace hetnet::onnxio::exporter {

namespace {

int64_t ConcatAxis(const OpExport& op, int rank) {
  int axis = op.args.GetSingleArgument<int>("axis", 1);
  if (!op.args.HasArgument("axis") && op.args.HasArgument("order"))
    axis = op.args.GetSingleArgument<std::string>("order", "NCHW") == "NHWC" ? 3 : 1;
  if (axis < 0) axis += rank;
  HN_ENFORCE(axis >= 0 && axis < rank, op.def.type(), ": axis ", axis, " is outside rank ", rank);
  return axis;
}

// Concat(X1..Xn) -> Y, split_info. add_axis stacks along a new axis: Unsqueeze each input first.
void ExportConcat(OpExport& op) {
  op.RequireUnused(1, "split_info");
  const bool add_axis = op.args.GetSingleArgument<int>("add_axis", 0) != 0;
  const int64_t axis = ConcatAxis(op, op.in_rank(0) + (add_axis ? 1 : 0));
  std::vector<std::string> inputs = op.in;
  if (add_axis) {
    for (auto& x : inputs) {
      const std::string u = op.Temp("unsqueezed");
      op.AxesNode("Unsqueeze", x, u, {axis});
      x = u;
    }
  }
  SetAttr(op.g.Node("Concat", inputs, {op.out[0]}), "axis", axis);
}

// Split(X[, split]) -> Y1..Yn along axis; the piece sizes are the outputs' sizes from the reference run.
void ExportSplit(OpExport& op) {
  if (op.in.size() > 1) op.Unsupported("split sizes as input 1");
  const int64_t axis = ConcatAxis(op, op.in_rank(0));
  std::vector<int64_t> sizes;
  for (const auto& f : op.out_facts) sizes.push_back(f.shape.at(axis));
  onnx::NodeProto* n;
  if (op.opset() >= 13) {
    n = op.g.Node("Split", {op.in[0], op.g.Int64s(op.out[0] + "_split", sizes)}, op.out);
  } else {
    n = op.g.Node("Split", {op.in[0]}, op.out);
    SetAttr(n, "split", sizes);
  }
  SetAttr(n, "axis", axis);
}

// Reshape(X[, shape]) -> Y, old_shape. Caffe2's 0 (copy the dim) and -1 (infer) are ONNX's too.
void ExportReshape(OpExport& op) {
  op.RequireUnused(1, "old_shape");
  std::string shape;
  if (op.in.size() > 1) {
    shape = op.in[1];
    if (op.in_facts[1].dtype != DataType::Int64) {
      shape = op.Temp("shape64");
      SetAttr(op.g.Node("Cast", {op.in[1]}, {shape}), "to", int64_t{onnx::TensorProto::INT64});
    }
  } else {
    if (!op.args.HasArgument("shape")) op.Unsupported("neither a shape argument nor input");
    shape = op.g.Int64s(op.out[0] + "_shape", op.args.GetRepeatedArgument<int64_t>("shape"));
  }
  op.g.Node("Reshape", {op.in[0], shape}, {op.out[0]});
}

void ExportFlatten(OpExport& op) {
  int axis = op.args.GetSingleArgument<int>("axis", 1);
  if (axis < 0) axis += op.in_rank(0);
  SetAttr(op.g.Node("Flatten", {op.in[0]}, {op.out[0]}), "axis", int64_t{axis});
}

void ExportTranspose(OpExport& op) {
  auto* n = op.g.Node("Transpose", {op.in[0]}, {op.out[0]});
  if (op.args.HasArgument("axes")) SetAttr(n, "perm", op.args.GetRepeatedArgument<int64_t>("axes"));
}

ExportFn WithDims(const std::string& onnx_type) {
  return [onnx_type](OpExport& op) {
    const int rank = onnx_type == "Squeeze" ? op.in_rank(0) : static_cast<int>(op.out_facts[0].shape.size());
    std::vector<int64_t> axes;
    for (int d : op.args.GetRepeatedArgument<int>("dims")) axes.push_back(d < 0 ? d + rank : d);
    op.AxesNode(onnx_type, op.in[0], op.out[0], axes);
  };
}

// Channels viewed as [group, C / group] and transposed: Reshape, Transpose of those two dims, Reshape back.
void ExportChannelShuffle(OpExport& op) {
  const std::string order = op.args.GetSingleArgument<std::string>("order", "NCHW");
  const auto& x = op.in_facts[0].shape;
  const int64_t group = op.args.GetSingleArgument<int>("group", 1);
  const size_t c = order == "NCHW" ? 1 : x.size() - 1;
  HN_ENFORCE(x.size() > c && group > 0 && x[c] % group == 0, "ChannelShuffle: input ", ShapeToString(x),
             " does not split into ", group, " groups (order ", order, ")");
  std::vector<int64_t> split(x.begin(), x.begin() + c);
  split.push_back(group);
  split.push_back(x[c] / group);
  split.insert(split.end(), x.begin() + c + 1, x.end());
  std::vector<int64_t> perm(split.size());
  for (size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(d);
  std::swap(perm[c], perm[c + 1]);
  const std::string grouped = op.Temp("grouped"), swapped = op.Temp("swapped");
  op.ReshapeTo(op.in[0], grouped, split);
  SetAttr(op.g.Node("Transpose", {grouped}, {swapped}), "perm", perm);
  op.ReshapeTo(swapped, op.out[0], x);
}

// ResizeLike(X, like): X's elements in like's shape.
void ExportResizeLike(OpExport& op) {
  const std::string shape = op.Temp("like_shape");
  op.g.Node("Shape", {op.in[1]}, {shape});
  op.g.Node("Reshape", {op.in[0], shape}, {op.out[0]});
}

}  // namespace

void AddShapeExporters(ExporterTable& t) {
  t["ChannelShuffle"] = ExportChannelShuffle;
  t["ResizeLike"] = ExportResizeLike;
  t["Concat"] = ExportConcat;
  t["Split"] = ExportSplit;
  t["Reshape"] = ExportReshape;
  t["Flatten"] = ExportFlatten;
  t["Transpose"] = ExportTranspose;
  t["Squeeze"] = WithDims("Squeeze");
  t["ExpandDims"] = WithDims("Unsqueeze");
}

}  // namespace hetnet::onnxio::exporter
