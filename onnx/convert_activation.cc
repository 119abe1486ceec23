// Activations hetnet has no operator for, composed from ones it has (numpy broadcasting of float
// scalar constants): HardSigmoid, HardSwish, Elu, Selu, Celu, Softsign, ThresholdedRelu, Softplus,
// Mish, Swish, Shrink, Erf, Gelu. float32
// inputs (the scalar constants are float32).
#include <cmath>

#include "onnx/convert_math_util.h"
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

std::string Scalar(ConvertContext& c, const std::string& hint, double v) {
  return c.AddConst(c.out(0) + "_" + hint, ConstTensor::Float({}, {v}));
}

std::string Scaled(ConvertContext& c, const std::string& x, float k, const std::string& out) {
  AddArgF(c.Emit("Scale", {x}, {out}), "scale", k);
  return out;
}

// clip(alpha * x + beta, 0, 1) into out.
void HardSigmoidInto(ConvertContext& c, float alpha, float beta, const std::string& out) {
  const std::string ax = Scaled(c, c.in(0), alpha, c.Fresh(c.out(0) + "_ax"));
  const std::string shifted = c.Fresh(c.out(0) + "_axb");
  c.Emit("Add", {ax, Scalar(c, "beta", beta)}, {shifted});
  auto& clip = c.Emit("Clip", {shifted}, {out});
  AddArgF(clip, "min", 0.f);
  AddArgF(clip, "max", 1.f);
}

// x > 0 ? x : alpha * (exp(x / k) - 1) into out (Elu: k = 1; Celu: k = alpha). A float16 / bfloat16
// input (declared by the model) is computed in float32 between two Casts, rounded once.
void EluInto(ConvertContext& c, float alpha, float k, const std::string& final_out) {
  using C2 = caffe2::TensorProto;
  const auto dt = c.Dtype(c.in(0));
  const bool narrow = dt == C2::FLOAT16 || dt == C2::BFLOAT16;
  const std::string x0 = narrow ? CastBlob(c, c.in(0), C2::FLOAT, c.out(0) + "_f32") : c.in(0);
  const std::string out = narrow ? c.Fresh(final_out + "_f32") : final_out;
  std::string x = x0;
  if (k != 1.f) x = Scaled(c, x, 1.f / k, c.Fresh(c.out(0) + "_xk"));
  const std::string e = c.Fresh(c.out(0) + "_exp"), em1 = c.Fresh(c.out(0) + "_expm1");
  c.Emit("Exp", {x}, {e});
  c.Emit("Sub", {e, Scalar(c, "one", 1.0)}, {em1});
  const std::string neg = Scaled(c, em1, alpha, c.Fresh(c.out(0) + "_neg"));
  const std::string pos = c.Fresh(c.out(0) + "_positive");
  c.Emit("GT", {x0, Scalar(c, "zero", 0.0)}, {pos});
  c.Emit("Where", {pos, x0, neg}, {out});
  if (narrow) AddArg(c.Emit("Cast", {out}, {final_out}), "to", static_cast<int64_t>(dt));
}

// log(1 + exp(x)) into out.
void SoftplusInto(ConvertContext& c, const std::string& out) {
  const std::string e = c.Fresh(c.out(0) + "_exp"), e1 = c.Fresh(c.out(0) + "_exp1");
  c.Emit("Exp", {c.in(0)}, {e});
  c.Emit("Add", {e, Scalar(c, "one", 1.0)}, {e1});
  c.Emit("Log", {e1}, {out});
}

// erf(x * k) into out: Abramowitz & Stegun 7.1.26 (absolute error under 1.5e-7), odd by sign.
void ErfInto(ConvertContext& c, const std::string& x0, float k, const std::string& out) {
  const std::string x = k == 1.f ? x0 : Scaled(c, x0, k, c.Fresh(c.out(0) + "_erf_in"));
  const std::string sign = c.Fresh(c.out(0) + "_sign"), a = c.Fresh(c.out(0) + "_abs");
  c.Emit("Sign", {x}, {sign});
  c.Emit("Abs", {x}, {a});
  const std::string den = c.Fresh(c.out(0) + "_den"), t = c.Fresh(c.out(0) + "_t");
  c.Emit("Add", {Scaled(c, a, 0.3275911f, c.Fresh(c.out(0) + "_pa")), Scalar(c, "one", 1.0)}, {den});
  AddArgF(c.Emit("Pow", {den}, {t}), "exponent", -1.f);
  const double coef[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  std::string h = Scaled(c, t, static_cast<float>(coef[4]), c.Fresh(c.out(0) + "_h"));
  for (int i = 3; i >= 0; --i) {
    const std::string sum = c.Fresh(c.out(0) + "_h"), prod = c.Fresh(c.out(0) + "_h");
    c.Emit("Add", {h, Scalar(c, "a" + std::to_string(i + 1), coef[i])}, {sum});
    c.Emit("Mul", {sum, t}, {prod});
    h = prod;
  }
  const std::string a2 = c.Fresh(c.out(0) + "_sq"), e = c.Fresh(c.out(0) + "_gauss"), he = c.Fresh(c.out(0) + "_tail"),
                    mag = c.Fresh(c.out(0) + "_erf_abs");
  c.Emit("Sqr", {a}, {a2});
  c.Emit("Exp", {Scaled(c, a2, -1.f, c.Fresh(c.out(0) + "_neg_sq"))}, {e});
  c.Emit("Mul", {h, e}, {he});
  c.Emit("Sub", {Scalar(c, "one", 1.0), he}, {mag});
  c.Emit("Mul", {sign, mag}, {out});
}

}  // namespace

void RegisterActivationConverters(ConverterRegistry& r) {
  r.Add("HardSigmoid", [](ConvertContext& c) {
    HardSigmoidInto(c, c.Float("alpha", 0.2f), c.Float("beta", 0.5f), c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("HardSwish", [](ConvertContext& c) {
    const std::string hs = c.Fresh(c.out(0) + "_hardsigmoid");
    HardSigmoidInto(c, 1.f / 6.f, 0.5f, hs);
    c.Emit("Mul", {c.in(0), hs}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Elu", [](ConvertContext& c) {
    EluInto(c, c.Float("alpha", 1.f), 1.f, c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Celu", [](ConvertContext& c) {
    const float alpha = c.Float("alpha", 1.f);
    if (alpha == 0.f) HN_THROW(kInvalidArgument, "Celu: alpha must not be 0");
    EluInto(c, alpha, alpha, c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Selu", [](ConvertContext& c) {
    const std::string elu = c.Fresh(c.out(0) + "_elu");
    EluInto(c, c.Float("alpha", 1.67326319217681884765625f), 1.f, elu);
    Scaled(c, elu, c.Float("gamma", 1.05070102214813232421875f), c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Softsign", [](ConvertContext& c) {  // x / (1 + |x|)
    const std::string a = c.Fresh(c.out(0) + "_abs"), d = c.Fresh(c.out(0) + "_den");
    c.Emit("Abs", {c.in(0)}, {a});
    c.Emit("Add", {a, Scalar(c, "one", 1.0)}, {d});
    c.Emit("Div", {c.in(0), d}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("ThresholdedRelu", [](ConvertContext& c) {  // x > alpha ? x : 0
    const std::string above = c.Fresh(c.out(0) + "_above");
    c.Emit("GT", {c.in(0), Scalar(c, "alpha", c.Float("alpha", 1.f))}, {above});
    c.Emit("Where", {above, c.in(0), Scalar(c, "zero", 0.0)}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Softplus", [](ConvertContext& c) {
    SoftplusInto(c, c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Mish", [](ConvertContext& c) {  // x * tanh(softplus(x))
    const std::string sp = c.Fresh(c.out(0) + "_softplus"), t = c.Fresh(c.out(0) + "_tanh");
    SoftplusInto(c, sp);
    c.Emit("Tanh", {sp}, {t});
    c.Emit("Mul", {c.in(0), t}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Swish", [](ConvertContext& c) {  // x * sigmoid(alpha * x)
    const float alpha = c.Float("alpha", 1.f);
    std::string x = c.in(0);
    if (alpha != 1.f) x = Scaled(c, x, alpha, c.Fresh(c.out(0) + "_ax"));
    const std::string s = c.Fresh(c.out(0) + "_sigmoid");
    c.Emit("Sigmoid", {x}, {s});
    c.Emit("Mul", {c.in(0), s}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Shrink", [](ConvertContext& c) {  // x < -l ? x + bias : x > l ? x - bias : 0
    const auto dt = c.Dtype(c.in(0));
    if (dt != caffe2::TensorProto::UNDEFINED && dt != caffe2::TensorProto::FLOAT)
      c.Refuse("only float32 inputs are supported");
    const float lambd = c.Float("lambd", 0.5f), bias = c.Float("bias", 0.f);
    const std::string below = c.Fresh(c.out(0) + "_below"), above = c.Fresh(c.out(0) + "_above"),
                      plus = c.Fresh(c.out(0) + "_plus"), minus = c.Fresh(c.out(0) + "_minus"),
                      upper = c.Fresh(c.out(0) + "_upper");
    c.Emit("LT", {c.in(0), Scalar(c, "neg_lambd", -lambd)}, {below});
    c.Emit("GT", {c.in(0), Scalar(c, "lambd", lambd)}, {above});
    c.Emit("Add", {c.in(0), Scalar(c, "bias", bias)}, {plus});
    c.Emit("Sub", {c.in(0), Scalar(c, "bias", bias)}, {minus});
    c.Emit("Where", {above, minus, Scalar(c, "zero", 0.0)}, {upper});
    c.Emit("Where", {below, plus, upper}, {c.out(0)});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Erf", [](ConvertContext& c) {
    ErfInto(c, c.in(0), 1.f, c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Gelu", [](ConvertContext& c) {  // x * (1 + erf(x / sqrt 2)) / 2, or its tanh approximation
    const std::string inner = c.Fresh(c.out(0) + "_inner"), half = c.Fresh(c.out(0) + "_half"),
                      onep = c.Fresh(c.out(0) + "_one_plus");
    if (c.Str("approximate", "none") == "tanh") {
      const std::string x3 = c.Fresh(c.out(0) + "_cube"), poly = c.Fresh(c.out(0) + "_poly");
      AddArgF(c.Emit("Pow", {c.in(0)}, {x3}), "exponent", 3.f);
      c.Emit("Add", {c.in(0), Scaled(c, x3, 0.044715f, c.Fresh(c.out(0) + "_cube_k"))}, {poly});
      c.Emit("Tanh", {Scaled(c, poly, 0.7978845608028654f, c.Fresh(c.out(0) + "_poly_k"))}, {inner});
    } else {
      ErfInto(c, c.in(0), 0.7071067811865476f, inner);
    }
    c.Emit("Add", {inner, Scalar(c, "one", 1.0)}, {onep});
    c.Emit("Mul", {c.in(0), onep}, {half});
    Scaled(c, half, 0.5f, c.out(0));
    c.SameDims(c.out(0), c.in(0));
  });
}

}  // namespace hetnet::onnxio
