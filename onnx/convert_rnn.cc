// Converters of ONNX's recurrent layers RNN, GRU and LSTM onto the CPU hetnet operators of the same
// names (operators/onnx_rnn_op): the inputs given, with arg `inputs` listing their ONNX indices; omitted
// outputs before the last one requested get fresh (unread) names. Also CausalConvWithState (opset 27;
// operators/causal_conv_with_state_op), a convolution that carries its state. Registered from
// RegisterNnConverters.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

void Recurrent(ConvertContext& c) {
  const int max_inputs = c.op_type() == "LSTM" ? 8 : 6, max_outputs = c.op_type() == "LSTM" ? 3 : 2;
  std::vector<std::string> ins;
  std::vector<int64_t> present;
  for (int i = 0; i < c.num_inputs() && i < max_inputs; ++i)
    if (c.has_in(i)) ins.push_back(c.in(i)), present.push_back(i);
  if (present.size() < 3 || present[2] != 2) c.Refuse("inputs X, W and R are required");
  if (c.Has("activation_alpha") || c.Has("activation_beta"))
    c.Refuse("activation_alpha / activation_beta (activations with parameters) are not supported");
  int last = 0;
  for (int i = 0; i < c.num_outputs() && i < max_outputs; ++i)
    if (c.has_out(i)) last = i;
  std::vector<std::string> outs;
  for (int i = 0; i <= last; ++i) outs.push_back(c.has_out(i) ? c.out(i) : c.Fresh(c.node().name() + "_rnn_unused"));
  auto& op = c.Emit(c.op_type(), ins, outs);
  AddArg(op, "inputs", present);
  for (const char* a : {"hidden_size", "layout", "linear_before_reset", "input_forget"})
    if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
  if (c.Has("direction")) AddArg(op, "direction", c.Str("direction", "forward"));
  if (c.Has("clip")) AddArgF(op, "clip", c.Float("clip", 0.f));
  if (c.Has("activations")) {
    auto& arg = *op.add_arg();
    arg.set_name("activations");
    for (const auto& s : c.Attr("activations")->strings()) arg.add_strings(s);
  }
  c.SetRank(outs[0], 4);
  for (size_t i = 1; i < outs.size(); ++i) c.SetRank(outs[i], 3);
}

void CausalConvWithState(ConvertContext& c) {
  if (!c.has_in(0) || !c.has_in(1)) c.Refuse("inputs input and weight are required");
  std::vector<std::string> ins{c.in(0), c.in(1)};
  for (int i = 2; i < 4; ++i)
    if (c.has_in(i)) ins.push_back(c.in(i));
  std::vector<std::string> outs{c.has_out(0) ? c.out(0) : c.Fresh("causal_conv_unused")};
  if (c.has_out(1)) outs.push_back(c.out(1));
  auto& op = c.Emit("CausalConvWithState", ins, outs);
  AddArg(op, "has_bias", int64_t{c.has_in(2)});
  AddArg(op, "has_past", int64_t{c.has_in(3)});
  if (c.Has("activation")) AddArg(op, "activation", c.Str("activation", "none"));
  for (const auto& o : outs) c.SetRank(o, 3);
}

}  // namespace

void RegisterRecurrentConverters(ConverterRegistry& r) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) r.Add(op, 7, kNewestOpset, Recurrent);
  r.Add("CausalConvWithState", 27, kNewestOpset, CausalConvWithState);
}

}  // namespace hetnet::onnxio
