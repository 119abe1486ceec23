// Exporters of the activations and the one-input math: Relu, Sigmoid, Tanh, LeakyRelu, PRelu,
// Softmax, Exp, Log, Abs, Sqr, Sqrt, Negative, Sign, Pow, Scale, Copy (and the cross-device copies),
// StopGradient.
#include "core/error.h"
#include "onnx/export_context.h"

namespace hetnet::onnxio::exporter {

namespace {

ExportFn Same(const std::string& onnx_type, int64_t since_opset = 1) {
  return [onnx_type, since_opset](OpExport& op) {
    if (op.opset() < since_opset) op.Unsupported(onnx_type + " needs opset " + std::to_string(since_opset));
    op.g.Node(onnx_type, {op.in[0]}, {op.out[0]});
  };
}

void ExportLeakyRelu(OpExport& op) {
  auto* n = op.g.Node("LeakyRelu", {op.in[0]}, {op.out[0]});
  SetAttr(n, "alpha", op.args.GetSingleArgument<float>("alpha", 0.01f));
}

// Caffe2's slope is per channel (dim 1 for NCHW, last for NHWC) or one shared value; ONNX broadcasts
// the slope numpy-style from the right, so an NCHW slope [C] becomes [C, 1, ..., 1].
void ExportPRelu(OpExport& op) {
  const std::string order = op.args.GetSingleArgument<std::string>("order", "NCHW");
  const int rank = op.in_rank(0);
  std::string slope = op.in[1];
  const auto& s = op.in_facts[1].shape;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<int64_t> shape;
  if (n == 1) {
    shape = {1};
  } else if (order == "NCHW" && rank > 2) {
    shape.assign(rank - 1, 1);
    shape[0] = n;
  }
  if (!shape.empty() && shape != s) slope = op.ReshapedInput(1, shape, "slope");
  op.g.Node("PRelu", {op.in[0], slope}, {op.out[0]});
}

// Caffe2 coerces X to 2-D at `axis` ([prod(dims[:axis]), prod(dims[axis:])]) and normalizes rows.
// ONNX before opset 13 has that rule; from 13 on Softmax normalizes one axis, so unless `axis` is
// the last dim: Flatten at axis, Softmax on the last axis, Reshape back to X's shape.
void ExportSoftmax(OpExport& op) {
  const int rank = op.in_rank(0);
  int axis = op.args.GetSingleArgument<int>("axis", 1);
  if (axis < 0) axis += rank;
  HN_ENFORCE(axis >= 0 && axis < std::max(rank, 1), "Softmax: axis ", axis, " outside rank ", rank);
  if (op.opset() < 13) {
    SetAttr(op.g.Node("Softmax", {op.in[0]}, {op.out[0]}), "axis", int64_t{axis});
    return;
  }
  if (axis == rank - 1) {
    SetAttr(op.g.Node("Softmax", {op.in[0]}, {op.out[0]}), "axis", int64_t{-1});
    return;
  }
  const std::string x2d = op.Temp("x2d"), y2d = op.Temp("y2d"), shape = op.Temp("shape");
  SetAttr(op.g.Node("Flatten", {op.in[0]}, {x2d}), "axis", int64_t{axis});
  SetAttr(op.g.Node("Softmax", {x2d}, {y2d}), "axis", int64_t{-1});
  op.g.Node("Shape", {op.in[0]}, {shape});
  op.g.Node("Reshape", {y2d, shape}, {op.out[0]});
}

void ExportSqr(OpExport& op) { op.g.Node("Mul", {op.in[0], op.in[0]}, {op.out[0]}); }

void ExportPow(OpExport& op) {
  if (op.in.size() > 1) op.Unsupported("exponent as input 1");
  const float e = op.args.GetSingleArgument<float>("exponent", 0.f);
  op.g.Node("Pow", {op.in[0], op.g.Scalar(op.out[0] + "_exponent", op.in_facts[0].dtype, e)}, {op.out[0]});
}

void ExportScale(OpExport& op) {
  const float s = op.args.GetSingleArgument<float>("scale", 1.f);
  op.g.Node("Mul", {op.in[0], op.g.Scalar(op.out[0] + "_scale", op.in_facts[0].dtype, s)}, {op.out[0]});
}

}  // namespace

void AddActivationExporters(ExporterTable& t) {
  t["Relu"] = Same("Relu");
  t["Sigmoid"] = Same("Sigmoid");
  t["Tanh"] = Same("Tanh");
  t["Exp"] = Same("Exp");
  t["Log"] = Same("Log");
  t["Abs"] = Same("Abs");
  t["Sqrt"] = Same("Sqrt");
  t["Negative"] = Same("Neg");
  t["Sign"] = Same("Sign", 9);
  t["Copy"] = Same("Identity");
  t["StopGradient"] = Same("Identity");
  t["CopyCPUToGPU"] = Same("Identity");  // devices are the runtime's business, not the model's
  t["CopyGPUToCPU"] = Same("Identity");
  t["LeakyRelu"] = ExportLeakyRelu;
  t["PRelu"] = ExportPRelu;
  t["Softmax"] = ExportSoftmax;
  t["Sqr"] = ExportSqr;
  t["Pow"] = ExportPow;
  t["Scale"] = ExportScale;
}

}  // namespace hetnet::onnxio::exporter
