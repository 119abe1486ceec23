#include "core/narrow_types.h"

#include <cmath>
#include <cstring>

#include "core/error.h"

namespace hetnet {

namespace {

// A small binary float: `bits` wide (sign bit on top), exponent and mantissa widths, bias. The
// special values differ by family: FN (no Inf, NaN = all ones), FNUZ (no Inf, no -0, NaN = 0x80),
// IEEE-like E5M2 (Inf and NaNs at the top exponent), E2M1 (no Inf, no NaN).
struct SmallFloat {
  int bits, exp_bits, man_bits, bias;
  enum Family { kFN, kFNUZ, kIEEE, kNone } family;

  int sign_bit() const { return 1 << (bits - 1); }
  int max_code() const {  // the largest finite magnitude, as a code without sign
    const int all = sign_bit() - 1;
    if (family == kFN) return all - 1;
    if (family == kIEEE) return (((1 << exp_bits) - 1) << man_bits) - 1;
    return all;
  }
};

constexpr SmallFloat kE4M3FN{8, 4, 3, 7, SmallFloat::kFN};
constexpr SmallFloat kE4M3FNUZ{8, 4, 3, 8, SmallFloat::kFNUZ};
constexpr SmallFloat kE5M2{8, 5, 2, 15, SmallFloat::kIEEE};
constexpr SmallFloat kE5M2FNUZ{8, 5, 2, 16, SmallFloat::kFNUZ};
constexpr SmallFloat kE2M1{4, 2, 1, 1, SmallFloat::kNone};

const SmallFloat& FormatOf(DataType t) {
  if (t == kFloat8E4M3FN) return kE4M3FN;
  if (t == kFloat8E4M3FNUZ) return kE4M3FNUZ;
  if (t == kFloat8E5M2) return kE5M2;
  if (t == kFloat8E5M2FNUZ) return kE5M2FNUZ;
  if (t == kFloat4E2M1) return kE2M1;
  HN_THROW(kInvalidArgument, DataTypeName(t), " is not a narrow float type");
}

float Decode(const SmallFloat& f, uint8_t code) {
  const int sign = code & f.sign_bit();
  const int mag = code & (f.sign_bit() - 1);
  const int e = mag >> f.man_bits, m = mag & ((1 << f.man_bits) - 1);
  if (f.family == SmallFloat::kFNUZ && code == 0x80) return NAN;
  if (f.family == SmallFloat::kFN && mag == f.sign_bit() - 1) return sign ? -NAN : NAN;
  if (f.family == SmallFloat::kIEEE && e == (1 << f.exp_bits) - 1)
    return m == 0 ? (sign ? -INFINITY : INFINITY) : (sign ? -NAN : NAN);
  const double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.man_bits)
                          : std::ldexp((1 << f.man_bits) + m, e - f.bias - f.man_bits);
  return static_cast<float>(sign ? -v : v);
}

uint8_t Encode(const SmallFloat& f, double v, bool saturate) {
  const bool neg = std::signbit(v);
  const int sign = neg ? f.sign_bit() : 0;
  if (std::isnan(v)) {
    switch (f.family) {
      case SmallFloat::kFNUZ: return 0x80;
      case SmallFloat::kFN: return static_cast<uint8_t>(sign | (f.sign_bit() - 1));
      case SmallFloat::kIEEE: return static_cast<uint8_t>(sign | (((1 << f.exp_bits) - 1) << f.man_bits) | 2);
      case SmallFloat::kNone: return static_cast<uint8_t>(sign ^ f.sign_bit());  // as ml_dtypes: +NaN -> -0
    }
  }
  const double a = std::fabs(v);
  if (a == 0) return static_cast<uint8_t>(f.family == SmallFloat::kFNUZ ? 0 : sign);
  int64_t code = 0;
  bool overflow = std::isinf(a);
  if (!overflow) {
    int e2 = 0;
    std::frexp(a, &e2);
    int64_t unbiased = e2 - 1;  // a = 1.x * 2^unbiased
    const int64_t emin = 1 - f.bias, one = int64_t{1} << f.man_bits;
    if (unbiased < emin) {  // subnormal (or rounds up to the smallest normal: code `one` is exactly it)
      code = static_cast<int64_t>(std::nearbyint(std::ldexp(a, static_cast<int>(f.man_bits - emin))));
    } else {
      int64_t q = static_cast<int64_t>(std::nearbyint(std::ldexp(a, static_cast<int>(f.man_bits - unbiased))));
      if (q == 2 * one) q = one, ++unbiased;
      code = ((unbiased + f.bias) << f.man_bits) | (q - one);  // beyond max_code when the exponent overflows
    }
    overflow = code > f.max_code();
  }
  if (overflow) {
    if (saturate || f.family == SmallFloat::kNone) code = f.max_code();
    else if (f.family == SmallFloat::kIEEE) code = ((1 << f.exp_bits) - 1) << f.man_bits;
    else if (f.family == SmallFloat::kFNUZ) return 0x80;
    else code = f.sign_bit() - 1;  // FN: NaN
  }
  if (code == 0 && f.family == SmallFloat::kFNUZ) return 0;
  return static_cast<uint8_t>(sign | code);
}

// onnx.numpy_helper.to_float8e8m0: the float32 exponent field, rounded up/down/to nearest by the bits
// below it; Inf and NaN give 0xFF (NaN); saturate keeps 0xFE from rounding up into 0xFF.
uint8_t EncodeE8M0(float v, bool saturate, E8M0Rounding rounding) {
  uint32_t b = 0;
  std::memcpy(&b, &v, 4);
  uint32_t exponent = (b >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;
  bool round_up = false;
  if (rounding == E8M0Rounding::kUp) {
    round_up = (b & 0x7FFFFF) != 0;
  } else if (rounding == E8M0Rounding::kNearest) {
    const bool g = b & 0x400000, r = b & 0x200000, s = (b & 0x1FFFFF) != 0, lsb = exponent > 0;
    round_up = g && (r || s || lsb);
  }
  if (round_up && !(saturate && exponent == 0xFE)) ++exponent;
  return static_cast<uint8_t>(exponent);
}

int64_t SignExtend(uint8_t bits, int width) {
  const int64_t m = int64_t{1} << (width - 1);
  const int64_t v = bits & ((int64_t{1} << width) - 1);
  return (v ^ m) - m;
}

int IntegerWidth(DataType t) { return t == kUInt4 || t == kInt4 ? 4 : 2; }

}  // namespace

const char* NarrowDataTypeName(DataType t) {
  if (t == kFloat8E4M3FN) return "float8_e4m3fn";
  if (t == kFloat8E4M3FNUZ) return "float8_e4m3fnuz";
  if (t == kFloat8E5M2) return "float8_e5m2";
  if (t == kFloat8E5M2FNUZ) return "float8_e5m2fnuz";
  if (t == kUInt4) return "uint4";
  if (t == kInt4) return "int4";
  if (t == kFloat4E2M1) return "float4_e2m1fn";
  if (t == kFloat8E8M0) return "float8_e8m0fnu";
  if (t == kUInt2) return "uint2";
  if (t == kInt2) return "int2";
  return nullptr;
}

DataType NarrowDataTypeNamed(const std::string& name) {
  for (int v = static_cast<int>(kFloat8E4M3FN); v <= static_cast<int>(kInt2); ++v)
    if (name == NarrowDataTypeName(static_cast<DataType>(v))) return static_cast<DataType>(v);
  return DataType::Undefined;
}

float NarrowToFloat(DataType t, uint8_t bits) {
  if (t == kFloat8E8M0) return bits == 0xFF ? NAN : std::ldexp(1.0f, static_cast<int>(bits) - 127);
  if (t == kInt4 || t == kInt2) return static_cast<float>(SignExtend(bits, IntegerWidth(t)));
  if (t == kUInt4 || t == kUInt2) return static_cast<float>(bits & ((1 << IntegerWidth(t)) - 1));
  return Decode(FormatOf(t), bits);
}

uint8_t NarrowFromDouble(DataType t, double v, bool saturate, E8M0Rounding rounding) {
  if (t == kFloat8E8M0) return EncodeE8M0(static_cast<float>(v), saturate, rounding);
  if (IsNarrowInteger(t)) {
    const int64_t i = v > -9.2e18 && v < 9.2e18 ? static_cast<int64_t>(v) : 0;  // NaN, Inf: 0, as numpy
    return NarrowFromInteger(t, i);
  }
  return Encode(FormatOf(t), v, saturate);
}

uint8_t NarrowFromInteger(DataType t, int64_t v) {
  if (IsNarrowInteger(t)) return static_cast<uint8_t>(static_cast<uint64_t>(v) & ((1u << IntegerWidth(t)) - 1));
  return NarrowFromDouble(t, static_cast<double>(v), true);
}

void NarrowIntegerRange(DataType t, double* lo, double* hi) {
  HN_ENFORCE(IsNarrowInteger(t), DataTypeName(t), " is not a narrow integer type");
  const int w = IntegerWidth(t);
  const bool is_signed = t == kInt4 || t == kInt2;
  *lo = is_signed ? -std::ldexp(1.0, w - 1) : 0.0;
  *hi = is_signed ? std::ldexp(1.0, w - 1) - 1 : std::ldexp(1.0, w) - 1;
}

}  // namespace hetnet
