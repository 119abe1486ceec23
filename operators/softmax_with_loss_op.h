// SoftmaxWithLoss(X, label[, weights]) -> softmax, loss (Caffe2 semantics): X viewed as [N, D] at
// `axis` (default 1); label int32 of N class ids ([N] or [N, 1]) or, with label_prob=1, float [N, D]
// probabilities; loss = scale * sum_i w_i * l_i / sum_i w_i, a 0-d tensor, l_i = -log(max(p, 1e-20)).
// SoftmaxWithLossGradient(X, label[, weights], softmax, d_loss) -> dX.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/softmax_op.h"

namespace hetnet {

// loss[0] = scale * sum_i w_i l_i / sum_i w_i (0 when the weights sum to 0). weights may be null.
template <class Context>
void SoftmaxLossKernel(int64_t N, int64_t D, const float* P, const int32_t* label, const float* label_prob,
                       const float* weights, float scale, float* loss, Context* ctx);
// dX = (P - target) * w_i * scale * d_loss[0] / sum_i w_i; d_loss on the device; scratch holds one float
// on the device.
template <class Context>
void SoftmaxLossGradientKernel(int64_t N, int64_t D, const float* P, const int32_t* label,
                               const float* label_prob, const float* weights, float scale, const float* d_loss,
                               float* dX, float* scratch, Context* ctx);

struct SoftmaxLossDims {
  int64_t N, D;
};

// Validates X, label and weights; messages name the blobs.
inline SoftmaxLossDims CheckSoftmaxLossInputs(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                              const std::vector<int64_t>& label, DataType label_type,
                                              const std::vector<int64_t>* weights, bool label_prob, int axis) {
  const int a = CanonicalAxisOf(def, axis, static_cast<int>(x.size()), 0);
  SoftmaxLossDims d{1, 1};
  for (int i = 0; i < a; ++i) d.N *= x[i];
  for (size_t i = a; i < x.size(); ++i) d.D *= x[i];
  const std::string xs = ShapeToString(x), ls = ShapeToString(label);
  if (label_prob) {
    HN_ENFORCE(label_type == DataType::Float, def.type(), ": with label_prob=1 input 1 ('", def.input(1),
               "') must be float32 probabilities, not ", DataTypeName(label_type));
    int64_t n = 1;
    for (size_t i = 0; i + 1 < label.size(); ++i) n *= label[i];
    HN_ENFORCE(!label.empty() && n == d.N && label.back() == d.D, def.type(), ": input 1 ('", def.input(1),
               "') has shape ", ls, " but input 0 ('", def.input(0), "') has shape ", xs,
               "; with label_prob=1 the label must be [", d.N, ", ", d.D, "]");
  } else {
    HN_ENFORCE(label_type == DataType::Int32, def.type(), ": input 1 ('", def.input(1), "') is ",
               DataTypeName(label_type), " but class labels must be int32 (or set label_prob=1 for float)");
    const bool ok = (label.size() == 1 && label[0] == d.N) || (label.size() == 2 && label[0] == d.N && label[1] == 1);
    HN_ENFORCE(ok, def.type(), ": input 1 ('", def.input(1), "') has shape ", ls, " but input 0 ('", def.input(0),
               "') of shape ", xs, " needs ", d.N, " labels ([", d.N, "] or [", d.N, ", 1])");
  }
  if (weights) {
    HN_ENFORCE(weights->size() == 1 && (*weights)[0] == d.N, def.type(), ": input 2 ('", def.input(2),
               "') has shape ", ShapeToString(*weights), " but ", d.N, " per-example weights are needed");
  }
  return d;
}

template <class Context>
class SoftmaxWithLossOp final : public Operator<Context> {
 public:
  SoftmaxWithLossOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        scale_(this->template GetSingleArgument<float>("scale", 1.f)),
        label_prob_(this->template GetSingleArgument<int>("label_prob", 0) != 0),
        axis_(this->template GetSingleArgument<int>("axis", 1)) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& L = this->Input(1);
    const Tensor* W = this->InputSize() > 2 ? &this->Input(2) : nullptr;
    EnforceFloatInput(this->def(), X, 0);
    if (W) EnforceFloatInput(this->def(), *W, 2);
    const SoftmaxLossDims d = CheckSoftmaxLossInputs(this->def(), X.shape(), L.shape(), L.dtype(),
                                                     W ? &W->shape() : nullptr, label_prob_, axis_);
    Tensor* P = this->Output(0, X.shape(), DataType::Float);
    float* p = P->template mutable_data<float>();
    SoftmaxKernel<Context>(d.N, d.D, X.template data<float>(), p, &this->context_);
    Tensor* loss = this->Output(1, {}, DataType::Float);
    SoftmaxLossKernel<Context>(d.N, d.D, p, label_prob_ ? nullptr : L.template data<int32_t>(),
                               label_prob_ ? L.template data<float>() : nullptr,
                               W ? W->template data<float>() : nullptr, scale_, loss->template mutable_data<float>(),
                               &this->context_);
  }

 private:
  float scale_;
  bool label_prob_;
  int axis_;
};

template <class Context>
class SoftmaxWithLossGradientOp final : public Operator<Context> {
 public:
  SoftmaxWithLossGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        scale_(this->template GetSingleArgument<float>("scale", 1.f)),
        label_prob_(this->template GetSingleArgument<int>("label_prob", 0) != 0),
        axis_(this->template GetSingleArgument<int>("axis", 1)) {}

  void RunOnDevice() override {
    const bool has_w = this->InputSize() == 5;
    const Tensor& X = this->Input(0);
    const Tensor& L = this->Input(1);
    const Tensor* W = has_w ? &this->Input(2) : nullptr;
    const Tensor& P = this->Input(has_w ? 3 : 2);
    const Tensor& dL = this->Input(has_w ? 4 : 3);
    const SoftmaxLossDims d = CheckSoftmaxLossInputs(this->def(), X.shape(), L.shape(), L.dtype(),
                                                     W ? &W->shape() : nullptr, label_prob_, axis_);
    HN_ENFORCE(P.shape() == X.shape(), "SoftmaxWithLossGradient: softmax input ('", this->def().input(has_w ? 3 : 2),
               "') has shape ", P.ShapeString(), " but X has shape ", X.ShapeString());
    HN_ENFORCE(dL.numel() == 1, "SoftmaxWithLossGradient: loss gradient ('", this->def().input(has_w ? 4 : 3),
               "') must hold one value, has shape ", dL.ShapeString());
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    scratch_.SetDevice(this->context_.device());
    scratch_.Resize({1});
    SoftmaxLossGradientKernel<Context>(d.N, d.D, P.template data<float>(),
                                       label_prob_ ? nullptr : L.template data<int32_t>(),
                                       label_prob_ ? L.template data<float>() : nullptr,
                                       W ? W->template data<float>() : nullptr, scale_, dL.template data<float>(),
                                       dX->template mutable_data<float>(), scratch_.template mutable_data<float>(),
                                       &this->context_);
  }

 private:
  Tensor scratch_;
  float scale_;
  bool label_prob_;
  int axis_;
};

}  // namespace hetnet
