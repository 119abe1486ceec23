// Converters of the elementwise ops with CPU-only hetnet operators of the same name: Ceil, Floor,
// Round, the trigonometric and hyperbolic functions, IsNaN, IsInf (operators/float_unary_ops.*) and
// BitwiseAnd / Or / Xor / Not (operators/bitwise_ops.*). Registered from RegisterMathConverters.
#include <algorithm>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

void RegisterMoreMathConverters(ConverterRegistry& r) {
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
