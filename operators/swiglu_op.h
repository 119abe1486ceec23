// SwiGLU(A, B) -> Y: ONNX's SwiGLU (opset 28), Y = A * sigmoid(alpha * A) * B elementwise (A and B of
// one shape and dtype; arg alpha, default 1). float32/64, float16, bfloat16; computed in float32
// (float64 for float64) with 16-bit inputs rounded per step as ONNX's reference. CPU only; no
// gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class SwiGLUOp final : public Operator<CPUContext> {
 public:
  SwiGLUOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), alpha_(GetSingleArgument<float>("alpha", 1.f)) {}
  void RunOnDevice() override;

 private:
  template <typename T, typename C>
  void Compute();

  float alpha_;
};

}  // namespace hetnet
