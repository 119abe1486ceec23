#include "operators/cross_entropy_ops.h"

#include <algorithm>
#include <cmath>

#include "core/gradient.h"

namespace hetnet {

template <>
void LabelCrossEntropyKernel<CPUContext>(int64_t N, int64_t D, const float* x, const int32_t* label, float* y,
                                         CPUContext*) {
  for (int64_t i = 0; i < N; ++i) y[i] = -XentLogTerm(1.f, x[i * D + label[i]]);
}

template <>
void LabelCrossEntropyGradientKernel<CPUContext>(int64_t N, int64_t D, const float* x, const int32_t* label,
                                                 const float* dy, float* dx, CPUContext*) {
  std::fill(dx, dx + N * D, 0.f);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t k = i * D + label[i];
    dx[k] = XentGradValue(dy[i], 1.f, x[k]);
  }
}

template <>
void CrossEntropyKernel<CPUContext>(int64_t N, int64_t D, const float* x, const float* label, float* y, CPUContext*) {
  for (int64_t i = 0; i < N; ++i) {
    float s = 0.f;
    for (int64_t j = 0; j < D; ++j) s -= XentLogTerm(label[i * D + j], x[i * D + j]);
    y[i] = s;
  }
}

template <>
void CrossEntropyGradientKernel<CPUContext>(int64_t N, int64_t D, const float* x, const float* label,
                                            const float* dy, float* dx, CPUContext*) {
  for (int64_t k = 0; k < N * D; ++k) dx[k] = XentGradValue(dy[k / D], label[k], x[k]);
}

template <>
void AveragedLossKernel<CPUContext>(int64_t n, const float* x, float* y, CPUContext*) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  y[0] = n > 0 ? static_cast<float>(s / n) : 0.f;
}

template <>
void AveragedLossGradientKernel<CPUContext>(int64_t n, const float* dy, float* dx, CPUContext*) {
  const float g = n > 0 ? dy[0] / static_cast<float>(n) : 0.f;
  std::fill(dx, dx + n, g);
}

namespace {
std::vector<TensorInfo> XentShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  const XentDims d = ComputeXentDims(def, in[0].dims, in[1].dims, def.type() == "CrossEntropy");
  return {TensorInfo::Of({d.N}, DataType::Float)};
}
}  // namespace

OPERATOR_SCHEMA(LabelCrossEntropy).NumInputs(2).NumOutputs(1).TensorInference(XentShape)
    .SetDoc("Y[i] = -log(max(X[i, label[i]], 1e-20)); X [N, D] probabilities, label int32 [N].");
OPERATOR_SCHEMA(LabelCrossEntropyGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);
OPERATOR_SCHEMA(CrossEntropy).NumInputs(2).NumOutputs(1).TensorInference(XentShape)
    .SetDoc("Y[i] = -sum_j label[i, j] * log(max(X[i, j], 1e-20)); label float [N, D] (soft labels).");
OPERATOR_SCHEMA(CrossEntropyGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);
OPERATOR_SCHEMA(AveragedLoss)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>&) {
      return std::vector<TensorInfo>{TensorInfo::Of({}, DataType::Float)};
    })
    .SetDoc("Y (0-d) = the mean of all elements of X.");
OPERATOR_SCHEMA(AveragedLossGradient).NumInputs(2).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(LabelCrossEntropy, LabelCrossEntropyOp<CPUContext>);
REGISTER_CPU_OPERATOR(LabelCrossEntropyGradient, LabelCrossEntropyGradientOp<CPUContext>);
REGISTER_CPU_OPERATOR(CrossEntropy, CrossEntropyOp<CPUContext>);
REGISTER_CPU_OPERATOR(CrossEntropyGradient, CrossEntropyGradientOp<CPUContext>);
REGISTER_CPU_OPERATOR(AveragedLoss, AveragedLossOp<CPUContext>);
REGISTER_CPU_OPERATOR(AveragedLossGradient, AveragedLossGradientOp<CPUContext>);

// (X, label) -> <Type>Gradient(X, label, dY) -> dX.
class GetCrossEntropyGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp(Def().type() + "Gradient", {I(0), I(1), GO(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(LabelCrossEntropy, GetCrossEntropyGradient);
REGISTER_GRADIENT(CrossEntropy, GetCrossEntropyGradient);

class GetAveragedLossGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("AveragedLossGradient", {I(0), GO(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(AveragedLoss, GetAveragedLossGradient);

}  // namespace hetnet
