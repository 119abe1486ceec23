// Exporters of the layer operators: FC, FCTransposed, Conv, ConvTranspose, MaxPool, AveragePool,
// SpatialBN, LRN, Dropout.
#include "core/error.h"
#include "onnx/export_context.h"
#include "operators/conv_pool_shape.h"

namespace hetnet::onnxio::exporter {

namespace {

int CanonicalAxis(const OpExport& op, int axis, int rank, const char* name) {
  const int a = axis < 0 ? axis + rank : axis;
  HN_ENFORCE(a >= 0 && a <= rank, op.def.type(), ": argument ", name, "=", axis, " is outside rank ", rank);
  return a;
}

// Caffe2's FC flattens X at `axis` and W at `axis_w` to 2-D; Gemm wants 2-D, so Flatten where the
// input is not already that matrix and Reshape Y back when `axis` keeps more than one leading dim.
void ExportFC(OpExport& op, bool w_transposed) {
  const int axis = CanonicalAxis(op, op.args.GetSingleArgument<int>("axis", 1), op.in_rank(0), "axis");
  const int axis_w = CanonicalAxis(op, op.args.GetSingleArgument<int>("axis_w", 1), op.in_rank(1), "axis_w");
  if (op.in.size() < 3) op.Unsupported("no bias input");
  std::string x = op.in[0], w = op.in[1];
  if (!(op.in_rank(0) == 2 && axis == 1)) {
    x = op.Temp("x2d");
    SetAttr(op.g.Node("Flatten", {op.in[0]}, {x}), "axis", int64_t{axis});
  }
  if (!(op.in_rank(1) == 2 && axis_w == 1)) {
    w = op.Temp("w2d");
    SetAttr(op.g.Node("Flatten", {op.in[1]}, {w}), "axis", int64_t{axis_w});
  }
  const bool reshape_back = op.out_facts[0].shape.size() != 2;
  const std::string y = reshape_back ? op.Temp("y2d") : op.out[0];
  auto* gemm = op.g.Node("Gemm", {x, w, op.in[2]}, {y});
  if (!w_transposed) SetAttr(gemm, "transB", int64_t{1});
  if (reshape_back) op.ReshapeTo(y, op.out[0], op.out_facts[0].shape);
}

// Kernel, pads, strides (and dilations) with legacy VALID / SAME padding resolved to explicit pads
// from the input shape the reference run saw.
struct Window {
  std::vector<int64_t> kernel, pads, strides, dilations;
  int group = 1;
  bool global = false;
};

Window ConvPoolWindow(OpExport& op, ConvPoolKind kind) {
  const ConvPoolArgs a = ParseConvPoolArgs(op.def, kind);
  if (a.legacy_pad == LegacyPadding::CAFFE_LEGACY_POOLING) op.Unsupported("legacy_pad CAFFE_LEGACY_POOLING");
  const std::vector<int64_t>* w = kind == ConvPoolKind::Pool ? nullptr : &op.in_facts.at(1).shape;
  const ConvPoolGeom g = ComputeConvPoolGeom(op.def, kind, a, op.in_facts[0].shape, w);
  Window win;
  win.kernel = {g.kh, g.kw};
  win.pads = {g.pt, g.pl, g.pb, g.pr};  // ONNX: [x1_begin, x2_begin, x1_end, x2_end], the same order
  win.strides = {g.sh, g.sw};
  win.dilations = {g.dh, g.dw};
  win.group = g.group;
  win.global = a.global_pooling;
  return win;
}

void ExportConv(OpExport& op) {
  const Window win = ConvPoolWindow(op, ConvPoolKind::Conv);
  auto* n = op.g.Node("Conv", op.in, {op.out[0]});
  SetAttr(n, "kernel_shape", win.kernel);
  SetAttr(n, "pads", win.pads);
  SetAttr(n, "strides", win.strides);
  SetAttr(n, "dilations", win.dilations);
  SetAttr(n, "group", int64_t{win.group});
}

void ExportConvTranspose(OpExport& op) {
  const ConvPoolArgs a = ParseConvPoolArgs(op.def, ConvPoolKind::ConvTranspose);
  const Window win = ConvPoolWindow(op, ConvPoolKind::ConvTranspose);
  auto* n = op.g.Node("ConvTranspose", op.in, {op.out[0]});
  SetAttr(n, "kernel_shape", win.kernel);
  SetAttr(n, "pads", win.pads);
  SetAttr(n, "strides", win.strides);
  SetAttr(n, "dilations", win.dilations);
  SetAttr(n, "output_padding", std::vector<int64_t>{a.adj[0], a.adj[1]});
  SetAttr(n, "group", int64_t{win.group});
}

void ExportPool(OpExport& op, bool is_max) {
  const Window win = ConvPoolWindow(op, ConvPoolKind::Pool);
  if (win.global) {
    op.g.Node(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {op.in[0]}, {op.out[0]});
    return;
  }
  auto* n = op.g.Node(is_max ? "MaxPool" : "AveragePool", {op.in[0]}, {op.out[0]});
  SetAttr(n, "kernel_shape", win.kernel);
  SetAttr(n, "pads", win.pads);
  SetAttr(n, "strides", win.strides);
  // Caffe2 divides by the window clipped to the input, ONNX's count_include_pad=0; both refuse to count padding.
  if (!is_max && op.args.GetSingleArgument<int>("count_include_pad", 0) != 0) SetAttr(n, "count_include_pad", int64_t{1});
}

void RequireNchw(const OpExport& op) {
  const std::string order = op.args.GetSingleArgument<std::string>("order", "NCHW");
  if (order != "NCHW") op.Unsupported("order " + order);
}

void ExportSpatialBN(OpExport& op) {
  RequireNchw(op);
  if (op.args.GetSingleArgument<int>("is_test", 0) == 0) op.Unsupported("is_test=0, training mode");
  for (int i = 1; i < static_cast<int>(op.out.size()); ++i) op.RequireUnused(i, "running statistics");
  auto* n = op.g.Node("BatchNormalization", op.in, {op.out[0]});
  SetAttr(n, "epsilon", op.args.GetSingleArgument<float>("epsilon", 1e-5f));
}

void ExportLRN(OpExport& op) {
  RequireNchw(op);
  op.RequireUnused(1, "scale");
  // Same formula on both sides: bias + alpha / size * (window sum of squares), window [c - (size-1)/2, ...].
  auto* n = op.g.Node("LRN", {op.in[0]}, {op.out[0]});
  SetAttr(n, "size", int64_t{op.args.GetSingleArgument<int>("size", 0)});
  SetAttr(n, "alpha", op.args.GetSingleArgument<float>("alpha", 0.f));
  SetAttr(n, "beta", op.args.GetSingleArgument<float>("beta", 0.f));
  SetAttr(n, "bias", op.args.GetSingleArgument<float>("bias", 1.f));
}

void ExportDropout(OpExport& op) {
  if (op.args.GetSingleArgument<int>("is_test", 0) == 0) op.Unsupported("is_test=0, training mode");
  op.RequireUnused(1, "mask");
  op.g.Node("Identity", {op.in[0]}, {op.out[0]});
}

}  // namespace

void AddNnExporters(ExporterTable& t) {
  t["FC"] = [](OpExport& op) { ExportFC(op, false); };
  t["FCTransposed"] = [](OpExport& op) { ExportFC(op, true); };
  t["Conv"] = ExportConv;
  t["ConvTranspose"] = ExportConvTranspose;
  t["MaxPool"] = [](OpExport& op) { ExportPool(op, true); };
  t["AveragePool"] = [](OpExport& op) { ExportPool(op, false); };
  t["SpatialBN"] = ExportSpatialBN;
  t["LRN"] = ExportLRN;
  t["Dropout"] = ExportDropout;
}

}  // namespace hetnet::onnxio::exporter
