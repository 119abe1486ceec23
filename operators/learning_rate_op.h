// LearningRate: lr = base_lr * multiplier(iter) as Caffe2's LearningRate. The iteration input is an
// int64 [1] tensor on CPU; the output (float [1]) lives on the op's device. Caffe2 convention: the
// op does not change the sign of base_lr. Its optimizer.py passes base_lr = -learning_rate when the
// lr goes into WeightedSum / Adam / Adagrad / RmsProp (they add lr * step), +learning_rate for
// MomentumSGDUpdate (it subtracts).
// Policies: fixed; step (stepsize, gamma); exp (gamma); inv (gamma, power); multistep (stepsizes,
// gamma); poly (power, max_iter); sigmoid (stepsize, gamma).
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

// The policy's multiplier at iteration `iter`; throws kInvalidArgument for a bad policy or args.
double LearningRateMultiplier(const caffe2::OperatorDef& def, int64_t iter);

template <class Context>
class LearningRateOp final : public Operator<Context> {
 public:
  LearningRateOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), base_lr_(this->template GetSingleArgument<float>("base_lr", 0.f)) {
    HN_ENFORCE(this->HasArgument("base_lr"), "LearningRate: argument base_lr is required");
    LearningRateMultiplier(def, 0);  // validates the policy and its arguments now
  }
  void RunOnDevice() override {
    const Tensor& it = this->Input(0);
    HN_ENFORCE(it.numel() == 1 && it.dtype() == DataType::Int64, "LearningRate: input 0 ('", this->def().input(0),
               "') must be an int64 tensor of one element, is ", it.DebugString());
    const float lr = static_cast<float>(base_lr_ * LearningRateMultiplier(this->def(), it.template data<int64_t>()[0]));
    Tensor* out = this->Output(0, {1}, DataType::Float);
    this->context_.CopyBytes(sizeof(float), &lr, Device::CPU(), out->template mutable_data<float>(), out->device());
    this->context_.FinishDeviceComputation();  // lr is a stack value
  }

 private:
  float base_lr_;
};

}  // namespace hetnet
