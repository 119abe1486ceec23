#include "operators/softmax_with_loss_op.h"

#include <algorithm>
#include <cmath>

#include "core/gradient.h"

namespace hetnet {

namespace {
void CheckLabels(int64_t N, int64_t D, const int32_t* label) {
  for (int64_t i = 0; i < N; ++i)
    HN_ENFORCE(label[i] >= 0 && label[i] < D, "SoftmaxWithLoss: label ", label[i], " of example ", i,
               " is outside [0, ", D, ")");
}
}  // namespace

template <>
void SoftmaxLossKernel<CPUContext>(int64_t N, int64_t D, const float* P, const int32_t* label,
                                   const float* label_prob, const float* weights, float scale, float* loss,
                                   CPUContext*) {
  if (label) CheckLabels(N, D, label);
  double sum = 0, total_w = 0;
  for (int64_t i = 0; i < N; ++i) {
    const double w = weights ? weights[i] : 1.0;
    double l = 0;
    if (label) {
      l = -std::log(std::max(P[i * D + label[i]], 1e-20f));
    } else {
      for (int64_t j = 0; j < D; ++j) l -= std::log(std::max(P[i * D + j], 1e-20f)) * label_prob[i * D + j];
    }
    sum += l * w;
    total_w += w;
  }
  loss[0] = total_w != 0 ? static_cast<float>(sum * scale / total_w) : 0.f;
}

template <>
void SoftmaxLossGradientKernel<CPUContext>(int64_t N, int64_t D, const float* P, const int32_t* label,
                                           const float* label_prob, const float* weights, float scale,
                                           const float* d_loss, float* dX, float*, CPUContext*) {
  if (label) CheckLabels(N, D, label);
  double total_w = 0;
  for (int64_t i = 0; i < N; ++i) total_w += weights ? weights[i] : 1.0;
  const float g = total_w != 0 ? static_cast<float>(scale * d_loss[0] / total_w) : 0.f;
  for (int64_t i = 0; i < N; ++i) {
    const float w = (weights ? weights[i] : 1.f) * g;
    for (int64_t j = 0; j < D; ++j) {
      const float target = label ? (j == label[i] ? 1.f : 0.f) : label_prob[i * D + j];
      dX[i * D + j] = (P[i * D + j] - target) * w;
    }
  }
}

OPERATOR_SCHEMA(SoftmaxWithLoss)
    .NumInputs(2, 3)
    .NumOutputs(2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      ArgumentHelper args(def);
      CheckSoftmaxLossInputs(def, in[0].dims, in[1].dims, in[1].dtype, in.size() > 2 ? &in[2].dims : nullptr,
                             args.GetSingleArgument<int>("label_prob", 0) != 0, args.GetSingleArgument<int>("axis", 1));
      return std::vector<TensorInfo>{in[0], TensorInfo::Of({}, DataType::Float)};
    })
    .SetDoc("Softmax followed by the mean (weighted) cross-entropy; outputs softmax and loss.");
OPERATOR_SCHEMA(SoftmaxWithLossGradient).NumInputs(4, 5).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(SoftmaxWithLoss, SoftmaxWithLossOp<CPUContext>);
REGISTER_CPU_OPERATOR(SoftmaxWithLossGradient, SoftmaxWithLossGradientOp<CPUContext>);

class GetSoftmaxWithLossGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> in{I(0), I(1)};
    if (Def().input_size() == 3) in.push_back(I(2));
    in.push_back(O(0));
    in.push_back(GO(1));
    auto op = GradientOp("SoftmaxWithLossGradient", in, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
REGISTER_GRADIENT(SoftmaxWithLoss, GetSoftmaxWithLossGradient);

}  // namespace hetnet
