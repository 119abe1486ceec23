// OnnxMod(A, B) -> C: ONNX's Mod, elementwise with numpy broadcasting, A and B of one dtype (float16/
// 32/64, int8/16/32/64, uint8/16). Arg fmod (default 0): 0 is numpy's mod (the result takes the
// divisor's sign: floats as npy_divmod, so x mod +-inf is x or +-inf by the signs, a zero result is
// a zero of the divisor's sign, NaN / Inf dividends and zero divisors give NaN); 1 is C's fmod /
// truncated remainder (the dividend's sign). An integer zero divisor gives 0 (numpy's answer, no
// trap); lowest mod -1 gives 0. float16 is computed in float32 (exact). CPU only; no gradient.
//
// OnnxPow(X, E) -> Y: ONNX's Pow, numpy broadcasting, Y of X's dtype (float16/32/64, int8/16/32/64,
// uint8/16); E any of those. Integer X with integer E: repeated squaring, wrapping (a negative E gives
// 1 / X^|E| truncated: 1 for X = 1, +-1 for X = -1, else 0); otherwise C's pow in float64, converted
// to X's dtype (an integer X takes the truncated result, 0 where it is NaN or out of range).
#pragma once

#include "core/operator.h"

namespace hetnet {

class OnnxModOp final : public Operator<CPUContext> {
 public:
  OnnxModOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  bool fmod_;
};

class OnnxPowOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
