// IEEE fp16 storage type with host-side conversions (no CUDA headers: core/ stays device-free).
#pragma once

#include <cstdint>
#include <cstring>

namespace hetnet {

struct Half {
  uint16_t bits = 0;
};

inline float HalfToFloat(Half h) {
  const uint32_t sign = (h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1f;
  uint32_t mant = h.bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
      mant &= 0x3ffu;
      out = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

// Round to nearest even.
inline Half FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  Half h;
  if (absx >= 0x7f800000u) {  // inf or nan
    h.bits = sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u);
  } else if (absx >= 0x477ff000u) {  // overflows to inf
    h.bits = sign | 0x7c00u;
  } else if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) { h.bits = sign; return h; }
    // Subnormal half: value / 2^-24, rounded to nearest even.
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t s = 126 - e;  // 14..24
    uint32_t q = m >> s;
    const uint32_t rem = m & ((1u << s) - 1);
    const uint32_t halfway = 1u << (s - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    h.bits = sign | static_cast<uint16_t>(q);
  } else {
    uint32_t r = absx - 0x38000000u;  // rebias exponent 127 -> 15
    const uint32_t lsb = (r >> 13) & 1u;
    r += 0xfffu + lsb;
    h.bits = sign | static_cast<uint16_t>(r >> 13);
  }
  return h;
}

}  // namespace hetnet
