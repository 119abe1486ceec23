// BitShift(X, Y) -> Z, ONNX's (opset 28 semantics): Z = X << Y (arg direction "LEFT") or X >> Y
// ("RIGHT") elementwise, X and Y of one integer dtype (int8/16/32/64, uint8/16), shapes broadcast
// numpy-style. A right shift of a signed X is arithmetic; a left shift keeps the low bits (two's
// complement). Y negative or >= the bit width gives -1 for a right shift of a negative X, else 0.
// CPU only; no gradient.
#pragma once

#include <type_traits>

#include "core/operator.h"

namespace hetnet {

template <typename T>
inline T BitShiftOne(T x, T y, bool left) {
  using U = typename std::make_unsigned<T>::type;
  constexpr int kBits = static_cast<int>(sizeof(T) * 8);
  bool x_negative = false, y_negative = false;  // (unsigned types: never; no always-false compares)
  if constexpr (std::is_signed<T>::value) x_negative = x < 0, y_negative = y < 0;
  if (y_negative || static_cast<uint64_t>(y) >= static_cast<uint64_t>(kBits)) return !left && x_negative ? T(-1) : T(0);
  if (left) return static_cast<T>(static_cast<U>(static_cast<U>(x) << static_cast<int>(y)));
  if (x_negative) {  // arithmetic: -1 - ((-1 - x) >> y), the shifted value non-negative (in int64, no promotion)
    const int64_t flipped = -1 - static_cast<int64_t>(x);
    return static_cast<T>(-1 - (flipped >> static_cast<int>(y)));
  }
  return static_cast<T>(static_cast<U>(x) >> static_cast<int>(y));
}

class BitShiftOp final : public Operator<CPUContext> {
 public:
  BitShiftOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool left_;
};

}  // namespace hetnet
