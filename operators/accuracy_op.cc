#include "operators/accuracy_op.h"

#include "core/gradient.h"

namespace hetnet {

template <>
void AccuracyKernel<CPUContext>(int64_t N, int64_t D, int top_k, const float* x, const int32_t* label, float* y,
                                CPUContext*) {
  int64_t correct = 0;
  for (int64_t i = 0; i < N; ++i)
    if (AccuracyRowCorrect(x + i * D, D, label[i], top_k)) ++correct;
  y[0] = N > 0 ? static_cast<float>(correct) / static_cast<float>(N) : 0.f;
}

OPERATOR_SCHEMA(Accuracy)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      CheckAccuracyInputs(def, in[0].dims, in[1].dims, ArgumentHelper(def).GetSingleArgument<int>("top_k", 1));
      return std::vector<TensorInfo>{TensorInfo::Of({}, DataType::Float)};
    })
    .SetDoc("Fraction of rows whose label is among the top_k predictions (float, 0-d).");

REGISTER_CPU_OPERATOR(Accuracy, AccuracyOp<CPUContext>);
NO_GRADIENT(Accuracy);

}  // namespace hetnet
