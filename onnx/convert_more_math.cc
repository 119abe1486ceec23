// Converters of the elementwise ops with CPU-only hetnet operators of the same name: Ceil, Floor,
// Round, the trigonometric and hyperbolic functions, IsNaN, IsInf (operators/float_unary_ops.*) and
// BitwiseAnd / Or / Xor / Not (operators/bitwise_ops.*); and Max / Min / Clip built from comparisons
// and Where (comparisons of int8 / int16 / uint8 / uint16 / float16 inputs computed on widened
// copies, convert_math_util.h). Registered from RegisterMathConverters.
#include <algorithm>
#include <limits>

#include "onnx/convert_math_util.h"

namespace hetnet::onnxio {

namespace {

// Max / Min of any number of inputs: Where(GT / LT(a, b), a, b), broadcasting.
void Extreme(ConvertContext& c, const std::string& cmp) {
  if (c.num_inputs() == 0 || !c.has_in(0)) HN_THROW(kInvalidArgument, c.op_type(), " needs at least one input");
  if (c.num_inputs() == 1) {
    c.Emit("StopGradient", {c.in(0)}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
    return;
  }
  const auto wide = WideType(c, c.in(0));
  std::string acc = c.in(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    const std::string pick = c.Fresh(c.out(0) + "_pick");
    const std::string next = i + 1 == c.num_inputs() ? c.out(0) : c.Fresh(c.out(0) + "_partial");
    c.Emit(cmp, {MaybeWiden(c, acc, wide), MaybeWiden(c, c.in(i), wide)}, {pick});
    c.Emit("Where", {pick, acc, c.in(i)}, {next});
    BroadcastDims(c, next, acc, c.in(i));
    acc = next;
  }
}

// Clip's bound from an attribute (opset < 11) or an optional constant input (opset >= 11).
float ClipBound(ConvertContext& c, const char* name, int input, float def) {
  if (c.opset() < 11) return c.Float(name, def);
  if (!c.has_in(input)) return def;
  const ConstTensor& k = c.RequireConst(input, std::string("Clip's ") + name);
  if (k.numel() != 1) HN_THROW(kInvalidArgument, "Clip: ", name, " must be a scalar, got ", k.numel(), " values");
  return static_cast<float>(k.Reals()[0]);
}

// Clip: our float32 Clip for constant bounds; bounds computed at run time or a non-float32 input
// (opset >= 11): min(max(x, lo), hi) as two Wheres, any dtype.
void Clip(ConvertContext& c) {
  auto given = [&c](int i) { return c.opset() >= 11 && c.num_inputs() > i && c.has_in(i); };
  const auto dt = c.Dtype(c.in(0));
  const bool other_type = c.opset() >= 11 && dt != caffe2::TensorProto::FLOAT && dt != caffe2::TensorProto::UNDEFINED;
  if ((given(1) && !c.Const(c.in(1))) || (given(2) && !c.Const(c.in(2))) || other_type) {
    const auto wide = WideType(c, c.in(0));
    std::string x = c.in(0);
    if (!given(1) && !given(2)) c.Emit("StopGradient", {x}, {c.out(0)});
    for (int i : {1, 2}) {
      if (!given(i)) continue;
      const bool last = i == 2 || !given(2);
      const std::string past = c.Fresh(c.out(0) + (i == 1 ? "_below" : "_above"));
      const std::string y = last ? c.out(0) : c.Fresh(c.out(0) + "_clipped_low");
      c.Emit(i == 1 ? "LT" : "GT", {MaybeWiden(c, x, wide), MaybeWiden(c, c.in(i), wide)}, {past});
      c.Emit("Where", {past, c.in(i), x}, {y});
      x = y;
    }
    c.SameDims(c.out(0), c.in(0));
    return;
  }
  auto& op = c.Emit("Clip", {c.in(0)}, {c.out(0)});
  AddArgF(op, "min", ClipBound(c, "min", 1, std::numeric_limits<float>::lowest()));
  AddArgF(op, "max", ClipBound(c, "max", 2, std::numeric_limits<float>::max()));
  c.SameDims(c.out(0), c.in(0));
}

}  // namespace

void RegisterMoreMathConverters(ConverterRegistry& r) {
  r.Add("Max", [](ConvertContext& c) { Extreme(c, "GT"); });
  r.Add("Min", [](ConvertContext& c) { Extreme(c, "LT"); });
  r.Add("Clip", Clip);
  for (const char* op : {"Ceil", "Floor", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
                         "Asinh", "Acosh", "Atanh", "IsNaN", "BitwiseNot"}) {
    r.Add(op, [](ConvertContext& c) {
      c.Emit(c.op_type(), {c.in(0)}, {c.out(0)});
      c.SameDims(c.out(0), c.in(0));
    });
  }
  r.Add("IsInf", [](ConvertContext& c) {
    auto& op = c.Emit("IsInf", {c.in(0)}, {c.out(0)});
    AddArg(op, "detect_positive", c.Int("detect_positive", 1));
    AddArg(op, "detect_negative", c.Int("detect_negative", 1));
    c.SameDims(c.out(0), c.in(0));
  });
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    r.Add(op, [](ConvertContext& c) {
      c.Emit(c.op_type(), {c.in(0), c.in(1)}, {c.out(0)});
      const auto* a = c.Dims(c.in(0));
      const auto* b = c.Dims(c.in(1));
      if (a && b) c.SetRank(c.out(0), static_cast<int>(std::max(a->size(), b->size())));
    });
  }
}

}  // namespace hetnet::onnxio
