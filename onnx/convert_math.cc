// Converters of the elementwise families: arithmetic, comparisons, unary math, activations, PRelu,
// Sum / Mean, Not / And / Or / Xor, Pow, BitShift, Cast / CastLike, Mod (Max / Min / Clip and the ops
// of CPU-only operators: convert_more_math.cc). Binary ops are emitted without Caffe2's legacy
// `broadcast` argument (the operators broadcast numpy-style), except at opsets < 7, whose
// broadcast/axis attributes are Caffe2's own rule and are passed on. Inputs of int8 / int16 / uint8 /
// uint16 / float16 are computed in int32 / float32 and cast back (convert_math_util.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx/convert_math_util.h"

namespace hetnet::onnxio {

void BroadcastDims(ConvertContext& c, const std::string& out, const std::string& a, const std::string& b) {
  const auto* da = c.Dims(a);
  const auto* db = c.Dims(b);
  if (!da || !db) return;
  const size_t n = std::max(da->size(), db->size());
  std::vector<int64_t> d(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - da->size() ? 1 : (*da)[i - (n - da->size())];
    const int64_t y = i < n - db->size() ? 1 : (*db)[i - (n - db->size())];
    d[i] = x == 1 ? y : y == 1 ? x : (x == y ? x : -1);
  }
  c.SetDims(out, d);
}

caffe2::TensorProto::DataType WideType(const ConvertContext& c, const std::string& blob) {
  switch (c.Dtype(blob)) {
    case caffe2::TensorProto::INT8:
    case caffe2::TensorProto::INT16:
    case caffe2::TensorProto::UINT8:
    case caffe2::TensorProto::UINT16: return caffe2::TensorProto::INT32;
    case caffe2::TensorProto::FLOAT16:
    case caffe2::TensorProto::BFLOAT16: return caffe2::TensorProto::FLOAT;
    default: return caffe2::TensorProto::UNDEFINED;
  }
}

std::string CastBlob(ConvertContext& c, const std::string& x, caffe2::TensorProto::DataType to, const std::string& hint) {
  const std::string out = c.Fresh(hint);
  AddArg(c.Emit("Cast", {x}, {out}), "to", static_cast<int64_t>(to));
  return out;
}

std::string MaybeWiden(ConvertContext& c, const std::string& x, caffe2::TensorProto::DataType to) {
  return to == caffe2::TensorProto::UNDEFINED ? x : CastBlob(c, x, to, x + "_wide");
}

namespace {

// Before opset 7, Add/Sub/Mul/Div/comparisons had Caffe2's own `broadcast` / `axis` attributes (B's
// dims a contiguous run of A's, at `axis` or at the end): passed on as they are.
bool LegacyBroadcast(ConvertContext& c) { return c.opset() < 7 && c.Int("broadcast", 0) != 0; }

// A float scalar constant operand that Mul / Div can take as Scale's argument (same rank result).
const ConstTensor* ScalarOperand(ConvertContext& c, int i, int other) {
  const ConstTensor* k = c.Const(c.in(i));
  if (!k || k->dtype != caffe2::TensorProto::FLOAT || k->numel() != 1) return nullptr;
  const int rank = c.Rank(c.in(other));
  if (!k->dims.empty() && (rank < 0 || static_cast<int>(k->dims.size()) > rank)) return nullptr;
  return k;
}

void Binary(ConverterRegistry& r, const std::string& onnx, const std::string& ours) {
  r.Add(onnx, [ours](ConvertContext& c) {
    const bool mul = ours == "Mul", div = ours == "Div";
    if (mul || div) {
      for (int i : {1, 0}) {
        if (div && i == 0) break;
        if (const ConstTensor* k = ScalarOperand(c, i, 1 - i)) {
          const double v = k->real[0];
          auto& op = c.Emit("Scale", {c.in(1 - i)}, {c.out(0)});
          AddArgF(op, "scale", static_cast<float>(div ? 1.0 / v : v));
          c.SameDims(c.out(0), c.in(1 - i));
          return;
        }
      }
    }
    const auto wide = WideType(c, c.in(0));
    if (wide != caffe2::TensorProto::UNDEFINED && !LegacyBroadcast(c)) {  // computed wide, cast back
      const bool compare = ours == "EQ" || ours == "NE" || ours == "GT" || ours == "GE" || ours == "LT" || ours == "LE";
      const std::string r = compare ? c.out(0) : c.Fresh(c.out(0) + "_wide");
      c.Emit(ours, {MaybeWiden(c, c.in(0), wide), MaybeWiden(c, c.in(1), wide)}, {r});
      if (!compare) AddArg(c.Emit("Cast", {r}, {c.out(0)}), "to", static_cast<int64_t>(c.Dtype(c.in(0))));
      BroadcastDims(c, c.out(0), c.in(0), c.in(1));
      return;
    }
    auto& op = c.Emit(ours, {c.in(0), c.in(1)}, {c.out(0)});
    if (LegacyBroadcast(c)) {
      AddArg(op, "broadcast", int64_t{1});
      if (c.Has("axis")) AddArg(op, "axis", c.Int("axis", -1));
      c.SameDims(c.out(0), c.in(0));
      return;
    }
    BroadcastDims(c, c.out(0), c.in(0), c.in(1));
  });
}

void Unary(ConverterRegistry& r, const std::string& onnx, const std::string& ours) {
  r.Add(onnx, [ours](ConvertContext& c) {
    c.Emit(ours, {c.in(0)}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
}

// The slope as our PRelu's per-channel [C] (or shared [1]) vector, or "" when ONNX's broadcast of the
// slope to X (right-aligned) varies along another axis or is not known at import time.
std::string PerChannelSlope(ConvertContext& c) {
  const ConstTensor* slope = c.Const(c.in(1));
  if (!slope) return "";
  if (slope->numel() == 1) return c.in(1);
  if (c.opset() < 7) {  // before numpy broadcasting, a slope of C values was per channel
    ConstTensor flat = *slope;
    flat.dims = {slope->numel()};
    return c.AddConst(c.in(1) + "_per_channel", std::move(flat));
  }
  const int rank = c.Rank(c.in(0));
  if (rank < 0) return "";
  const int offset = rank - static_cast<int>(slope->dims.size());
  int64_t channels = 1;
  for (size_t j = 0; j < slope->dims.size(); ++j) {
    if (slope->dims[j] == 1) continue;
    if (static_cast<int>(j) + offset != 1) return "";
    channels = slope->dims[j];
  }
  if (slope->dims.size() == 1 && offset == 1) return c.in(1);
  ConstTensor flat = *slope;
  flat.dims = {channels};
  return c.AddConst(c.in(1) + "_per_channel", std::move(flat));
}

// PRelu: our per-channel operator where the slope fits it, else relu(x) - slope * relu(-x) with the
// slope broadcast numpy-style.
void Prelu(ConvertContext& c) {
  const std::string slope = PerChannelSlope(c);
  if (!slope.empty()) {
    c.Emit("PRelu", {c.in(0), slope}, {c.out(0)});
  } else {
    const std::string pos = c.Fresh(c.out(0) + "_pos"), neg = c.Fresh(c.out(0) + "_neg"),
                      rneg = c.Fresh(c.out(0) + "_relu_neg"), scaled = c.Fresh(c.out(0) + "_scaled");
    c.Emit("Relu", {c.in(0)}, {pos});
    c.Emit("Negative", {c.in(0)}, {neg});
    c.Emit("Relu", {neg}, {rneg});
    c.Emit("Mul", {c.in(1), rneg}, {scaled});
    c.Emit("Sub", {pos, scaled}, {c.out(0)});
  }
  c.SameDims(c.out(0), c.in(0));
}

void Cast(ConvertContext& c) {
  int32_t to = 0;
  const auto* a = c.Attr("to");
  if (!a) HN_THROW(kInvalidArgument, "Cast: attribute 'to' is required");
  if (a->type() == onnx::AttributeProto::STRING) {  // opset 1 named the type
    onnx::TensorProto::DataType t;
    if (!onnx::TensorProto::DataType_Parse(a->s(), &t)) c.Refuse("unknown target type '" + a->s() + "'");
    to = t;
  } else {
    to = static_cast<int32_t>(c.Int("to", 0));
  }
  const auto ours = DtypeFromOnnx(to);
  if (ours == caffe2::TensorProto::UNDEFINED || ours == caffe2::TensorProto::STRING)
    c.Refuse(std::string("cast to ") + OnnxTypeName(to) + " is not supported");
  auto& op = c.Emit("Cast", {c.in(0)}, {c.out(0)});
  AddArg(op, "to", static_cast<int64_t>(ours));
  if (c.Has("saturate")) AddArg(op, "saturate", c.Int("saturate", 1));
  if (c.Has("round_mode")) AddArg(op, "round_mode", c.Str("round_mode", "up"));
  PinNarrowCastToCPU(&op, c.Dtype(c.in(0)), ours);
  c.SameDims(c.out(0), c.in(0));
}

}  // namespace

void RegisterMoreMathConverters(ConverterRegistry& r);  // convert_more_math.cc

void RegisterMathConverters(ConverterRegistry& r) {
  RegisterMoreMathConverters(r);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) Binary(r, op, op);
  Binary(r, "Equal", "EQ");
  Binary(r, "Greater", "GT");
  Binary(r, "Less", "LT");
  Binary(r, "GreaterOrEqual", "GE");
  Binary(r, "LessOrEqual", "LE");

  const std::pair<const char*, const char*> unary[] = {
      {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Exp", "Exp"},   {"Log", "Log"},
      {"Abs", "Abs"},   {"Neg", "Negative"},    {"Sqrt", "Sqrt"}, {"Sign", "Sign"}, {"Identity", "StopGradient"}};
  for (const auto& [onnx, ours] : unary) Unary(r, onnx, ours);

  r.Add("Reciprocal", [](ConvertContext& c) {
    AddArgF(c.Emit("Pow", {c.in(0)}, {c.out(0)}), "exponent", -1.f);
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("LeakyRelu", [](ConvertContext& c) {
    AddArgF(c.Emit("LeakyRelu", {c.in(0)}, {c.out(0)}), "alpha", c.Float("alpha", 0.01f));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("PRelu", Prelu);
  r.Add("Pow", [](ConvertContext& c) {
    const auto base = c.Dtype(c.in(0));
    if (base != caffe2::TensorProto::FLOAT && base != caffe2::TensorProto::UNDEFINED) {  // our CPU OnnxPow
      c.Emit("OnnxPow", {c.in(0), c.in(1)}, {c.out(0)});
      BroadcastDims(c, c.out(0), c.in(0), c.in(1));
      return;
    }
    const ConstTensor* e = c.Const(c.in(1));
    if (e && e->numel() == 1 && (e->dims.empty() || static_cast<int>(e->dims.size()) <= c.Rank(c.in(0)))) {
      AddArgF(c.Emit("Pow", {c.in(0)}, {c.out(0)}), "exponent", static_cast<float>(e->Reals()[0]));
      c.SameDims(c.out(0), c.in(0));
      return;
    }
    // Otherwise computed from Exp and Log, for float32 bases.
    if (c.Dtype(c.in(0)) != caffe2::TensorProto::FLOAT)
      c.Refuse("an exponent that is not a one-element constant needs a float32 base declared by the model");
    std::string y = c.in(1);
    if (c.Dtype(y) != caffe2::TensorProto::FLOAT) {
      y = c.Fresh(c.out(0) + "_exponent");
      AddArg(c.Emit("Cast", {c.in(1)}, {y}), "to", static_cast<int64_t>(caffe2::TensorProto::FLOAT));
    }
    // |x|^y = exp(y log|x|) with numpy's rules around it: y == 0 gives 1 (0^0 too); a negative base
    // gives the sign of (-1)^y for a whole y and NaN for a fractional one.
    auto emit = [&c](const char* type, std::vector<std::string> in, const char* hint) {
      const std::string out = c.Fresh(c.out(0) + hint);
      c.Emit(type, std::move(in), {out});
      return out;
    };
    auto cast = [&c](const std::string& in, caffe2::TensorProto::DataType to, const char* hint) {
      const std::string out = c.Fresh(c.out(0) + hint);
      AddArg(c.Emit("Cast", {in}, {out}), "to", static_cast<int64_t>(to));
      return out;
    };
    auto scalar = [&c](const char* hint, double v) { return c.AddConst(c.out(0) + hint, ConstTensor::Float({}, {v})); };
    const std::string x = c.in(0), zero = scalar("_zero", 0.0);
    const std::string magnitude = emit("Exp", {emit("Mul", {y, emit("Log", {emit("Abs", {x}, "_abs")}, "_log")}, "_ylog")},
                                       "_magnitude");
    const std::string r = emit("Where", {emit("EQ", {y, zero}, "_y_zero"), scalar("_one", 1.0), magnitude}, "_pos");
    // y is whole when float(int64(y)) == y; odd when half of it is not (Cast saturates, NaN -> 0).
    const std::string whole = emit("EQ", {cast(cast(y, caffe2::TensorProto::INT64, "_y_int"),
                                               caffe2::TensorProto::FLOAT, "_y_trunc"), y}, "_y_whole");
    const std::string half_y = emit("Mul", {y, scalar("_half", 0.5)}, "_half_y");
    const std::string odd = emit("NE", {cast(cast(half_y, caffe2::TensorProto::INT64, "_half_int"),
                                             caffe2::TensorProto::FLOAT, "_half_trunc"), half_y}, "_y_odd");
    const std::string signed_r = emit("Where", {odd, emit("Negative", {r}, "_neg"), r}, "_signed");
    const std::string negative_base = emit("Where", {whole, signed_r, scalar("_nan", std::nan(""))}, "_neg_base");
    c.Emit("Where", {emit("LT", {x, zero}, "_x_negative"), negative_base, r}, {c.out(0)});
    BroadcastDims(c, c.out(0), c.in(0), c.in(1));
  });
  // Sum / Mean of same-shape inputs (ONNX broadcasts them since opset 8: left to the operator).
  auto sum = [](ConvertContext& c, bool mean) {
    std::vector<std::string> ins;
    for (int i = 0; i < c.num_inputs(); ++i)
      if (c.has_in(i)) ins.push_back(c.in(i));
    if (ins.empty()) HN_THROW(kInvalidArgument, c.op_type(), " needs at least one input");
    const std::string total = mean && ins.size() > 1 ? c.Fresh(c.out(0) + "_sum") : c.out(0);
    // Our Sum takes equal shapes; ONNX's broadcasts (opset 8): a chain of Adds unless the shapes are
    // known to be equal.
    bool same = c.Dims(ins[0]) && !std::count(c.Dims(ins[0])->begin(), c.Dims(ins[0])->end(), -1);
    for (const auto& i : ins) same &= c.Dims(i) && *c.Dims(i) == *c.Dims(ins[0]);
    if (ins.size() == 1) {
      c.Emit("StopGradient", ins, {total});
    } else if (same) {
      c.Emit("Sum", ins, {total});
    } else {
      std::string acc = ins[0];
      for (size_t i = 1; i < ins.size(); ++i) {
        const std::string next = i + 1 == ins.size() ? total : c.Fresh(c.out(0) + "_partial");
        c.Emit("Add", {acc, ins[i]}, {next});
        BroadcastDims(c, next, acc, ins[i]);
        acc = next;
      }
    }
    if (mean && ins.size() > 1)
      AddArgF(c.Emit("Scale", {total}, {c.out(0)}), "scale", 1.f / static_cast<float>(ins.size()));
    if (same) c.SameDims(c.out(0), ins[0]);
    else if (mean && c.Dims(total)) c.SetDims(c.out(0), *c.Dims(total));
  };
  // Logic on BOOL tensors: Xor is NE; Not, And, Or pick with Where against a constant.
  auto bool_const = [](ConvertContext& c, bool v) {
    ConstTensor k;
    k.dtype = caffe2::TensorProto::BOOL;
    k.integer = {v ? 1 : 0};
    return c.AddConst(c.out(0) + (v ? "_true" : "_false"), std::move(k));
  };
  r.Add("Not", [bool_const](ConvertContext& c) {
    c.Emit("EQ", {c.in(0), bool_const(c, false)}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("And", [bool_const](ConvertContext& c) {
    c.Emit("Where", {c.in(0), c.in(1), bool_const(c, false)}, {c.out(0)});
    BroadcastDims(c, c.out(0), c.in(0), c.in(1));
  });
  r.Add("Or", [bool_const](ConvertContext& c) {
    c.Emit("Where", {c.in(0), bool_const(c, true), c.in(1)}, {c.out(0)});
    BroadcastDims(c, c.out(0), c.in(0), c.in(1));
  });
  Binary(r, "Xor", "NE");
  r.Add("Sum", [sum](ConvertContext& c) { sum(c, false); });
  r.Add("Mean", [sum](ConvertContext& c) { sum(c, true); });
  r.Add("BitShift", [](ConvertContext& c) {  // opset 28's semantics (11's left shifts >= width undefined)
    const std::string dir = c.Str("direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      HN_THROW(kInvalidArgument, "BitShift: attribute 'direction' must be LEFT or RIGHT, not '", dir, "'");
    AddArg(c.Emit("BitShift", {c.in(0), c.in(1)}, {c.out(0)}), "direction", dir);
    BroadcastDims(c, c.out(0), c.in(0), c.in(1));
  });
  r.Add("Cast", Cast);
  r.Add("Mod", [](ConvertContext& c) {  // our CPU OnnxMod (numpy's / C's semantics by fmod)
    AddArg(c.Emit("OnnxMod", {c.in(0), c.in(1)}, {c.out(0)}), "fmod", c.Int("fmod", 0));
    BroadcastDims(c, c.out(0), c.in(0), c.in(1));
  });
  // CastLike: a Cast to input 1's type where the model declares it (or it is a constant); one that
  // hetnet tensors lack is refused as Cast refuses it; an undeclared one is read at run time (CastLike).
  r.Add("CastLike", [](ConvertContext& c) {
    const auto to = c.Dtype(c.in(1));
    const int32_t declared = c.OnnxDtype(c.in(1));
    if (to == caffe2::TensorProto::UNDEFINED && declared != 0)
      c.Refuse(std::string("cast to ") + OnnxTypeName(declared) + " (the type of input '" + c.in(1) +
               "') is not supported");
    if (to == caffe2::TensorProto::STRING) c.Refuse("cast to STRING is not supported");
    auto& op = to == caffe2::TensorProto::UNDEFINED ? c.Emit("CastLike", {c.in(0), c.in(1)}, {c.out(0)})
                                                     : c.Emit("Cast", {c.in(0)}, {c.out(0)});
    if (to != caffe2::TensorProto::UNDEFINED) AddArg(op, "to", static_cast<int64_t>(to));
    if (c.Has("saturate")) AddArg(op, "saturate", c.Int("saturate", 1));
    PinNarrowCastToCPU(&op, c.Dtype(c.in(0)), to);
    c.SameDims(c.out(0), c.in(0));
  });
}

}  // namespace hetnet::onnxio
