// ai.onnx.preview.training Adagrad, Momentum and Adam onto OnnxAdagrad / OnnxMomentum / OnnxAdam
// (operators/onnx_optimizer_ops.h): the node's inputs, outputs and attributes as they are.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

void Optimizer(ConvertContext& c, const std::string& ours) {
  std::vector<std::string> ins, outs;
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_in(i)) c.Refuse("input " + std::to_string(i) + " is omitted; every input is required");
    ins.push_back(c.in(i));
  }
  for (int i = 0; i < c.num_outputs(); ++i) outs.push_back(c.has_out(i) ? c.out(i) : c.Fresh(ours + "_unused"));
  auto& op = c.Emit(ours, ins, outs);
  for (const char* a : {"alpha", "beta", "epsilon", "decay_factor", "norm_coefficient", "norm_coefficient_post"})
    if (c.Has(a)) AddArgF(op, a, c.Float(a, 0.f));
  if (c.Has("mode")) {
    auto* m = op.add_arg();
    m->set_name("mode");
    m->set_s(c.Str("mode", "standard"));
  }
  const int n_out = c.num_outputs(), groups = ours == "OnnxAdam" ? 3 : 2;
  for (int i = 0; i < n_out && n_out % groups == 0; ++i) c.SameDims(outs[i], c.in(2 + i % (n_out / groups)));
}

}  // namespace

void RegisterTrainingConverters(ConverterRegistry& r) {
  r.Add("ai.onnx.preview.training::Adagrad", [](ConvertContext& c) { Optimizer(c, "OnnxAdagrad"); });
  r.Add("ai.onnx.preview.training::Momentum", [](ConvertContext& c) { Optimizer(c, "OnnxMomentum"); });
  r.Add("ai.onnx.preview.training::Adam", [](ConvertContext& c) { Optimizer(c, "OnnxAdam"); });
}

}  // namespace hetnet::onnxio
