// Dropout. Inference (opset < 12, or training_mode absent or a constant false): the identity, and a
// mask that keeps everything. Training (training_mode true or known only at run time): OnnxDropout
// (operators/onnx_dropout_op.h), whose `seed` attribute reproduces NumPy's RandomState(seed) draws.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

void Inference(ConvertContext& c) {
  c.Emit("StopGradient", {c.in(0)}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
  if (c.has_out(1)) {  // the mask keeps everything: true in X's shape
    auto& mask = c.Emit("ConstantFill", {c.in(0)}, {c.out(1)});
    AddArg(mask, "dtype", static_cast<int64_t>(caffe2::TensorProto::BOOL));
    AddArg(mask, "value", int64_t{1});
    c.SameDims(c.out(1), c.in(0));
  }
}

void Dropout(ConvertContext& c) {
  if (c.opset() < 12 || !c.has_in(2)) return Inference(c);
  if (const ConstTensor* t = c.Const(c.in(2))) {
    if (t->numel() != 1) c.Refuse("training_mode must hold one bool");
    if (t->Ints("training_mode")[0] == 0) return Inference(c);
  }
  const std::string ratio = c.has_in(1) ? c.in(1) : c.AddConst(c.out(0) + "_ratio", ConstTensor::Float({}, {0.5}));
  std::vector<std::string> outs{c.out(0)};
  if (c.has_out(1)) outs.push_back(c.out(1));
  auto& op = c.Emit("OnnxDropout", {c.in(0), ratio, c.in(2)}, outs);
  if (c.Has("seed")) AddArg(op, "seed", c.Int("seed", 0));
  c.SameDims(c.out(0), c.in(0));
  if (c.has_out(1)) c.SameDims(c.out(1), c.in(0));
}

}  // namespace

void RegisterDropoutConverters(ConverterRegistry& r) { r.Add("Dropout", Dropout); }

}  // namespace hetnet::onnxio
