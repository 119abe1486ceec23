// bfloat16 storage type (the upper 16 bits of an IEEE float32) with host-side conversions. Like
// core/half.h it has no CUDA headers: core/ stays device-free, and the struct is plain data so
// byte copies (and the CUDA Set kernel) move it as is.
#pragma once

#include <cstdint>
#include <cstring>

namespace hetnet {

struct BFloat16 {
  uint16_t bits = 0;
};

inline float BFloat16ToFloat(BFloat16 b) {
  const uint32_t x = static_cast<uint32_t>(b.bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Round to nearest even; a NaN stays a (quiet) NaN with its sign, Inf stays Inf, float denormals
// round like any other value (bfloat16 has float32's exponent range).
inline BFloat16 FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  BFloat16 b;
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN: truncating could clear every mantissa bit
    b.bits = static_cast<uint16_t>((x >> 16) | 0x0040u);
    return b;
  }
  const uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;  // carries into the exponent where needed; the largest finite values go to Inf
  b.bits = static_cast<uint16_t>(x >> 16);
  return b;
}

}  // namespace hetnet
