// Exp, Log, Abs, Sqr, Negative, Pow: schemas, gradient makers and CPU kernels (see unary_math_ops.h).
#include "operators/unary_math_ops.h"

#include <algorithm>
#include <cmath>

#include "core/argument.h"
#include "core/gradient.h"
#include "operators/cpu_chunked.h"
#include "operators/cpu_float_math.h"

namespace hetnet {

// Exp and Log: cpu_float_math.h's vectorizable versions (within 1 ulp, glibc's NaN / Inf / zero
// answers), chunked over the OpenMP team above 64K elements. The std::exp / std::log loops ran
// 2.3 / 3.0 ns an element, 5-8x numpy.
template <>
void ExpKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  CpuChunked(n, [&](int64_t o, int64_t k) {
    for (int64_t i = o; i < o + k; ++i) y[i] = cpu_math::ExpFloat(x[i]);
  });
}
template <>
void LogKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  CpuChunked(n, [&](int64_t o, int64_t k) { cpu_math::LogFloats(k, x + o, y + o); });
}
template <>
void AbsKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = AbsValue(x[i]);
}
template <>
void SqrKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = SqrValue(x[i]);
}
template <>
void AbsGradientKernel<CPUContext>(int64_t n, const float* x, const float* dy, float* dx, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) dx[i] = AbsGradientValue(x[i], dy[i]);
}
namespace {
// pow(x, 0.5) as sqrt, with pow's answers where they differ: pow(-0, 0.5) = +0 (x + 0 turns -0
// into +0 and leaves the rest), pow(-inf, 0.5) = +inf. In blocks: x may be y (in place).
void PowHalf(int64_t n, const float* x, float* y) {
  constexpr int64_t kBlock = 256;
  float t[kBlock];
  for (int64_t o = 0; o < n; o += kBlock) {
    const int64_t k = std::min(kBlock, n - o);
    cpu_math::SqrtFloats(k, x + o, t);
    for (int64_t i = 0; i < k; ++i)
      y[o + i] = cpu_math::BitsFloat(cpu_math::Select(cpu_math::FloatBits(x[o + i]) == 0xff800000u, 0x7f800000u,
                                                      cpu_math::FloatBits(t[i] + 0.f)));
  }
}
}  // namespace

// Exponents 2, -1 and 0.5 as x * x, 1 / x and sqrt: correctly rounded, where glibc's powf is an
// ulp off in rare near-halfway cases (so these differ from the old loop there, by that ulp); 1 and 0
// as powf gives them; other finite exponents through cpu_float_math.h's PowFloat (exp(e log|x|) in
// double, within an ulp, C's signs and special cases), infinite and NaN ones through std::pow.
// Chunked over the OpenMP team above 64K elements. The powf loop ran 10 ns an element for exponent
// 2 (20x numpy), 6 for 2.5 (5x).
template <>
void PowKernel<CPUContext>(int64_t n, const float* x, float exponent, float* y, CPUContext*) {
  const double e = exponent;
  const bool e_int = std::nearbyint(e) == e, e_odd = e_int && std::fmod(e, 2.0) != 0.0;
  CpuChunked(n, [&](int64_t o, int64_t k) {
    const float* xo = x + o;
    float* yo = y + o;
    if (exponent == 2.f) {
      for (int64_t i = 0; i < k; ++i) yo[i] = xo[i] * xo[i];
    } else if (exponent == -1.f) {
      for (int64_t i = 0; i < k; ++i) yo[i] = 1.f / xo[i];
    } else if (exponent == 1.f) {
      if (yo != xo) std::copy(xo, xo + k, yo);  // -0 stays -0, NaN stays NaN
    } else if (exponent == 0.f) {
      for (int64_t i = 0; i < k; ++i) yo[i] = 1.f;  // pow(anything, 0) = 1, NaN included
    } else if (exponent == 0.5f) {
      PowHalf(k, xo, yo);
    } else if (std::isfinite(exponent)) {
      cpu_math::PowFloats(k, xo, yo, e, e_int, e_odd);
    } else {
      for (int64_t i = 0; i < k; ++i) yo[i] = PowValue(xo[i], exponent);
    }
  });
}
#define HN_NEGATIVE_CPU(T)                                                              \
  template <>                                                                           \
  void NegativeKernel<T, CPUContext>(int64_t n, const T* x, T* y, CPUContext*) {        \
    for (int64_t i = 0; i < n; ++i) y[i] = NegateValue(x[i]);                           \
  }
HN_NEGATIVE_CPU(float)
HN_NEGATIVE_CPU(double)
HN_NEGATIVE_CPU(int32_t)
HN_NEGATIVE_CPU(int64_t)
#undef HN_NEGATIVE_CPU

void CheckPowDef(const caffe2::OperatorDef& def) {
  HN_CHECK_KIND(kUnsupported, def.input_size() < 2, "Pow: the two-input form (the exponent as input 1 ('",
                def.input_size() > 1 ? def.input(1) : std::string(), "') with broadcast) is not supported; give "
                "the exponent as the float argument 'exponent' and one input");
  HN_ENFORCE(ArgumentHelper(def).HasArgument("exponent"),
             "Pow: argument 'exponent' (float) is required (the exponent as a second input is not supported)");
}

// ---- schemas ----
OPERATOR_SCHEMA(Exp).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = exp(X), elementwise, float32 (Caffe2's Exp). Input X; output Y of X's shape; in place allowed. "
            "IEEE: exp(NaN) = NaN, exp(+Inf) = +Inf, exp(-Inf) = 0, overflow gives +Inf. "
            "Gradient: Mul(Y, dY) -> dX.");
OPERATOR_SCHEMA(Log).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = log(X) (natural logarithm), elementwise, float32 (Caffe2's Log). In place allowed. "
            "IEEE: log(0) = -Inf, log(x < 0) = NaN, log(NaN) = NaN, log(+Inf) = +Inf. "
            "Gradient: Div(dY, X) -> dX; for an in-place Log, X is recovered as Exp(Y).");
OPERATOR_SCHEMA(Abs).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape()
    .SetDoc("Y = |X|, elementwise, float32 (Caffe2's Abs; not in place: the gradient reads X). "
            "abs(NaN) = NaN, abs(-Inf) = +Inf. Gradient: AbsGradient(X, dY) -> dX.");
OPERATOR_SCHEMA(AbsGradient).NumInputs(2).NumOutputs(1).AllowInplace({{1, 0}}).IdenticalTypeAndShapeOfInput(1)
    .SetDoc("dX = dY * sign(X), elementwise, float32; inputs X, dY. Products are IEEE: at X = 0 the "
            "result is 0 * dY, a NaN X gives NaN.");
OPERATOR_SCHEMA(Sqr).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = X * X, elementwise, float32 (Caffe2's Sqr). In place allowed for the forward pass; the "
            "gradient of an in-place Sqr is refused (it needs X, which the op overwrote). "
            "Gradient: Scale(dY, scale=2) -> dX; Mul(dX, X) -> dX.");
OPERATOR_SCHEMA(Negative).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = -X, elementwise, float32, float64, int32 or int64 (Caffe2's Negative). In place allowed. "
            "Integers wrap: -lowest is lowest. Gradient: Negative(dY) -> dX.");
OPERATOR_SCHEMA(Pow).NumInputs(1, 2).NumOutputs(1).AllowInplace({{0, 0}, {1, 0}}).IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = X ^ exponent, elementwise, float32 (Caffe2's Pow). Argument exponent (float, required). "
            "Caffe2's second form (the exponent as input 1, with args broadcast and axis) is refused: "
            "kUnsupported. In place allowed. C's pow: pow(NaN, 0) = 1, pow(x < 0, non-integer) = NaN, "
            "pow(0, e < 0) = +Inf. Gradient: Pow(X, exponent=e-1) -> dX; Mul(dX, dY) -> dX; "
            "Scale(dX, scale=e) -> dX; in place, as Caffe2, Pow(Y, exponent=(e-1)/e) stands for X^(e-1), "
            "which holds only for X > 0 (and e != 0).");

REGISTER_CPU_OPERATOR(Exp, ExpOp<CPUContext>);
REGISTER_CPU_OPERATOR(Log, LogOp<CPUContext>);
REGISTER_CPU_OPERATOR(Abs, AbsOp<CPUContext>);
REGISTER_CPU_OPERATOR(AbsGradient, AbsGradientOp<CPUContext>);
REGISTER_CPU_OPERATOR(Sqr, SqrOp<CPUContext>);
REGISTER_CPU_OPERATOR(Negative, NegativeOp<CPUContext>);
REGISTER_CPU_OPERATOR(Pow, PowOp<CPUContext>);

// ---- gradients (Caffe2's gradient defs) ----
namespace {

caffe2::Argument FloatArg(const std::string& name, float v) {
  caffe2::Argument a;
  a.set_name(name);
  a.set_f(v);
  return a;
}

// For the gradient of an op run in place, the input's and output's gradients have one name: a
// value computed before reading dY needs a blob of its own.
std::string InPlaceTemp(const std::string& op, const caffe2::OperatorDef& def) {
  return "_" + def.output(0) + "_" + op + "_grad_tmp";
}

class GetExpGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("Mul", {O(0), GO(0)}, {GI(0)})};
  }
};

class GetLogGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    if (I(0) != O(0)) return {GradientOp("Div", {GO(0), I(0)}, {GI(0)})};
    // In place: the blob holds Y = log(X), so X = exp(Y) (Caffe2 divided by Y here). dX and dY are
    // then one blob name, so exp(Y) goes to a temporary first.
    const std::string x = InPlaceTemp("log", Def());
    return {GradientOp("Exp", {O(0)}, {x}), GradientOp("Div", {GO(0), x}, {GI(0)})};
  }
};

class GetAbsGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("AbsGradient", {I(0), GO(0)}, {GI(0)})};
  }
};

class GetSqrGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    HN_ENFORCE(I(0) != O(0), "Sqr: no gradient for an in-place Sqr ('", I(0), "' -> '", O(0),
               "'): the gradient needs X, which the op overwrote; give the output another name");
    // Caffe2 scaled dY in place (overwriting the output gradient); dX is scaled instead.
    const std::string gi = GI(0);
    return {GradientOp("Scale", {GO(0)}, {gi}, {FloatArg("scale", 2.f)}), GradientOp("Mul", {gi, I(0)}, {gi})};
  }
};

class GetNegativeGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("Negative", {GO(0)}, {GI(0)})};
  }
};

class GetPowGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    CheckPowDef(Def());
    const float e = ArgumentHelper(Def()).GetSingleArgument<float>("exponent", 0.f);
    float pow_e = e - 1.f;
    if (I(0) == O(0)) {
      // In place (Caffe2's rule): the blob holds Y = X^e and Y^((e-1)/e) = X^(e-1) for X > 0.
      HN_ENFORCE(std::fabs(e) > 1e-12f, "Pow: no gradient for an in-place Pow with exponent ", e,
                 " ('", I(0), "'): X cannot be recovered from Y; give the output another name");
      pow_e = (e - 1.f) / e;
    }
    // In place, dX and dY are one blob name: X^(e-1) goes to a temporary, not to dX.
    const std::string gi = GI(0), t = I(0) == O(0) ? InPlaceTemp("pow", Def()) : gi;
    return {GradientOp("Pow", {I(0)}, {t}, {FloatArg("exponent", pow_e)}), GradientOp("Mul", {t, GO(0)}, {gi}),
            GradientOp("Scale", {gi}, {gi}, {FloatArg("scale", e)})};
  }
};

}  // namespace

REGISTER_GRADIENT(Exp, GetExpGradient);
REGISTER_GRADIENT(Log, GetLogGradient);
REGISTER_GRADIENT(Abs, GetAbsGradient);
REGISTER_GRADIENT(Sqr, GetSqrGradient);
REGISTER_GRADIENT(Negative, GetNegativeGradient);
REGISTER_GRADIENT(Pow, GetPowGradient);

}  // namespace hetnet
