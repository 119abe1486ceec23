// ONNX's BitwiseAnd / BitwiseOr / BitwiseXor (A, B) -> C and BitwiseNot (X) -> Y on one integer dtype
// (int8, int16, int32, int64, uint8, uint16; ONNX's uint32 / uint64 have no hetnet tensor type), shapes
// broadcast numpy-style for the binary ones. Bool is refused (ONNX uses And / Or / Xor / Not for it).
// CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

enum class BitwiseFn { kAnd, kOr, kXor, kNot };

template <BitwiseFn F>
class BitwiseOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
