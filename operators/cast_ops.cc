#include "operators/cast_ops.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "core/gradient.h"

namespace hetnet {

namespace {
constexpr float kHalfMax = 65504.f;

// float16 and bfloat16 convert through float32 (exact), in and out (rounded to nearest even).
template <typename S>
float AsFloat(S v) {
  if constexpr (std::is_same<S, Half>::value) return HalfToFloat(v);
  else if constexpr (std::is_same<S, BFloat16>::value) return BFloat16ToFloat(v);
  else return static_cast<float>(v);
}
template <typename S>
constexpr bool kSixteenBitFloat = std::is_same<S, Half>::value || std::is_same<S, BFloat16>::value;

template <typename D, typename S>
D ConvertOne(S v) {
  if constexpr (std::is_same<D, S>::value) return v;
  else if constexpr (kSixteenBitFloat<S>) return ConvertOne<D>(AsFloat(v));
  else if constexpr (std::is_same<D, bool>::value) return v != S(0);
  else if constexpr (std::is_same<D, Half>::value) return FloatToHalf(static_cast<float>(v));
  else if constexpr (std::is_same<D, BFloat16>::value) return FloatToBFloat16(static_cast<float>(v));
  else return CastNumber<D>(v);
}

template <typename S, typename D>
void CastLoop(int64_t n, const S* x, D* y, bool clip_half) {
  if constexpr (std::is_same<D, Half>::value && !std::is_same<S, Half>::value) {
    if (clip_half) {
      for (int64_t i = 0; i < n; ++i) {
        const float v = AsFloat(x[i]);
        y[i] = FloatToHalf(v > kHalfMax ? kHalfMax : (v < -kHalfMax ? -kHalfMax : v));
      }
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = ConvertOne<D>(x[i]);
}
}  // namespace

template <>
void CastKernel<CPUContext>(DataType from, DataType to, int64_t n, const void* x, void* y, bool clip_half,
                            CPUContext*) {
  DispatchCastTypes(from, to, [&](auto s, auto d) {
    using S = decltype(s);
    using D = decltype(d);
    CastLoop<S, D>(n, static_cast<const S*>(x), static_cast<D*>(y), clip_half);
  });
}

void CastNarrowCPU(DataType from, DataType to, int64_t n, const void* x, void* y, bool saturate, E8M0Rounding rounding,
                   CPUContext* ctx) {
  auto* out = static_cast<uint8_t*>(y);
  if (IsNarrowDataType(from)) {  // every narrow value is exact in float32
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = NarrowToFloat(from, static_cast<const uint8_t*>(x)[i]);
    if (!IsNarrowDataType(to)) return CastKernel<CPUContext>(DataType::Float, to, n, v.data(), y, false, ctx);
    for (int64_t i = 0; i < n; ++i) out[i] = NarrowFromDouble(to, v[i], saturate, rounding);
    return;
  }
  const bool integral = from != DataType::Float && from != DataType::Double && from != DataType::Float16 &&
                        from != DataType::BFloat16;
  if (integral && IsNarrowInteger(to)) {  // through int64: the low bits of any integer, as numpy wraps
    std::vector<int64_t> v(n);
    CastKernel<CPUContext>(from, DataType::Int64, n, x, v.data(), false, ctx);
    for (int64_t i = 0; i < n; ++i) out[i] = NarrowFromInteger(to, v[i]);
    return;
  }
  std::vector<double> v(n);  // float64 holds every float32/float16 value exactly: one rounding, to `to`
  CastKernel<CPUContext>(from, DataType::Double, n, x, v.data(), false, ctx);
  for (int64_t i = 0; i < n; ++i) out[i] = NarrowFromDouble(to, v[i], saturate, rounding);
}

E8M0Rounding CastRoundModeArg(const caffe2::OperatorDef& def) {
  const std::string mode = ArgumentHelper(def).GetSingleArgument<std::string>("round_mode", "up");
  if (mode == "up") return E8M0Rounding::kUp;
  if (mode == "down") return E8M0Rounding::kDown;
  HN_ENFORCE(mode == "nearest", def.type(), ": argument round_mode is '", mode, "'; up, down or nearest is required");
  return E8M0Rounding::kNearest;
}

DataType CastDataTypeArg(const caffe2::OperatorDef& def, const std::string& name) {
  const caffe2::Argument* a = ArgumentHelper(def).Find(name);
  if (!a) return DataType::Undefined;
  if (a->has_s()) {
    std::string s = a->s();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    caffe2::TensorProto_DataType t;
    HN_ENFORCE(caffe2::TensorProto_DataType_Parse(s, &t), def.type(), ": argument `", name, "` names no dtype: '",
               a->s(), "'");
    return static_cast<DataType>(static_cast<int>(t));
  }
  HN_ENFORCE(a->has_i(), def.type(), ": argument `", name, "` must be an int or a string");
  HN_ENFORCE(IsKnownDataType(static_cast<int>(a->i())) || IsNarrowDataType(static_cast<DataType>(a->i())), def.type(),
             ": argument `", name, "` = ", a->i(),
             " is not a TensorProto.DataType");
  return static_cast<DataType>(a->i());
}

OPERATOR_SCHEMA(Cast)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, CastDataTypeArg(def, "to"))};
    })
    .SetDoc("Y = X converted to dtype `to` (TensorProto.DataType, int or name).");
OPERATOR_SCHEMA(FloatToHalf)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, DataType::Float16)};
    })
    .SetDoc("float32 -> float16 (round to nearest even; clip=1 saturates at +-65504).");
OPERATOR_SCHEMA(HalfToFloat)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, DataType::Float)};
    })
    .SetDoc("float16 -> float32.");

REGISTER_CPU_OPERATOR(Cast, CastOp<CPUContext>);
REGISTER_CPU_OPERATOR(FloatToHalf, FloatToHalfOp<CPUContext>);
REGISTER_CPU_OPERATOR(HalfToFloat, HalfToFloatOp<CPUContext>);

class GetCastGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const DataType to = CastDataTypeArg(Def(), "to");
    const DataType from = CastDataTypeArg(Def(), "from_type");
    HN_ENFORCE(from != DataType::Undefined,
               "Cast: argument `from_type` (int or string) is required to get the gradient of Cast");
    caffe2::Argument a, b;
    a.set_name("to");
    a.set_i(static_cast<int>(from));
    b.set_name("from_type");
    b.set_i(static_cast<int>(to));
    return {GradientOp("Cast", {GO(0)}, {GI(0)}, {a, b})};
  }
};
REGISTER_GRADIENT(Cast, GetCastGradient);

class GetHalfFloatGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp(Def().type() == "FloatToHalf" ? "HalfToFloat" : "FloatToHalf", {GO(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(FloatToHalf, GetHalfFloatGradient);
REGISTER_GRADIENT(HalfToFloat, GetHalfFloatGradient);

}  // namespace hetnet
