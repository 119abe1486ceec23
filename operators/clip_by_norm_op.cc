#include "operators/clip_by_norm_op.h"

#include <cmath>

#include "core/gradient.h"
#include "operators/cpu_chunked.h"
#include "operators/cpu_float_math.h"

namespace hetnet {

template <>
void SumSqrKernel<CPUContext>(int64_t n, const float* x, float* y, float scale, CPUContext*) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  y[0] = static_cast<float>(s * scale);
}
// Whole vectors of IEEE sqrt (bitwise std::sqrt's results; its errno kept the loop scalar, 1 ns an
// element), chunked over the OpenMP team above 64K elements.
template <>
void SqrtKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  CpuChunked(n, [&](int64_t o, int64_t k) { cpu_math::SqrtFloats(k, x + o, y + o); });
}
template <>
void SignKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  for (int64_t i = 0; i < n; ++i) y[i] = SignValue(x[i]);
}

OPERATOR_SCHEMA(SumSqrElements).NumInputs(1).NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>&) {
      return std::vector<TensorInfo>{TensorInfo::Of({}, DataType::Float)};
    })
    .SetDoc("Y = sum(X^2) as a 0-d float (arg average=1 divides by the element count).");
OPERATOR_SCHEMA(Sqrt).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = sqrt(X), elementwise.");
OPERATOR_SCHEMA(Sign).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).IdenticalTypeAndShape()
    .SetDoc("Y = sign(X) in {-1, 0, 1}, elementwise.");
OPERATOR_SCHEMA(ClipTensorByScaling).NumInputs(2, 3).NumOutputs(1).AllowInplace({{0, 0}}).InputsOnCPU({1, 2})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = X * threshold / val when val > threshold, else X (val: the norm, one float on CPU).");

REGISTER_CPU_OPERATOR(SumSqrElements, SumSqrElementsOp<CPUContext>);
REGISTER_CPU_OPERATOR(Sqrt, SqrtOp<CPUContext>);
REGISTER_CPU_OPERATOR(Sign, SignOp<CPUContext>);
REGISTER_CPU_OPERATOR(ClipTensorByScaling, ClipTensorByScalingOp<CPUContext>);
NO_GRADIENT(SumSqrElements);
NO_GRADIENT(Sign);
NO_GRADIENT(ClipTensorByScaling);
// Sqrt: no gradient maker here (an error if it is on the path from a loss).

}  // namespace hetnet
