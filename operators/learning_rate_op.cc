#include "operators/learning_rate_op.h"

#include <cmath>

#include "core/gradient.h"

namespace hetnet {

double LearningRateMultiplier(const caffe2::OperatorDef& def, int64_t iter) {
  ArgumentHelper a(def);
  const std::string policy = a.GetSingleArgument<std::string>("policy", "");
  const double gamma = a.GetSingleArgument<float>("gamma", 0.f);
  const double it = static_cast<double>(iter);
  auto need = [&](const char* arg) {
    HN_ENFORCE(a.HasArgument(arg), "LearningRate: policy '", policy, "' needs argument ", arg);
  };
  if (policy == "fixed") return 1.0;
  if (policy == "step") {
    need("stepsize");
    need("gamma");
    const int64_t stepsize = a.GetSingleArgument<int64_t>("stepsize", 1);
    HN_ENFORCE(stepsize > 0, "LearningRate: stepsize must be positive, is ", stepsize);
    return std::pow(gamma, static_cast<double>(iter / stepsize));
  }
  if (policy == "exp") {
    need("gamma");
    return std::pow(gamma, it);
  }
  if (policy == "inv") {
    need("gamma");
    need("power");
    return std::pow(1.0 + gamma * it, -static_cast<double>(a.GetSingleArgument<float>("power", 1.f)));
  }
  if (policy == "multistep") {
    need("stepsizes");
    need("gamma");
    int passed = 0;
    for (int64_t s : a.GetRepeatedArgument<int64_t>("stepsizes"))
      if (iter >= s) ++passed;
    return std::pow(gamma, passed);
  }
  if (policy == "poly") {
    need("max_iter");
    const double max_iter = static_cast<double>(a.GetSingleArgument<int64_t>("max_iter", 1));
    HN_ENFORCE(max_iter > 0, "LearningRate: max_iter must be positive");
    return std::pow(std::max(0.0, 1.0 - it / max_iter), a.GetSingleArgument<float>("power", 1.f));
  }
  if (policy == "sigmoid") {
    need("stepsize");
    need("gamma");
    return 1.0 / (1.0 + std::exp(gamma * (it - static_cast<double>(a.GetSingleArgument<int64_t>("stepsize", 0)))));
  }
  HN_THROW(kInvalidArgument, "LearningRate: unknown policy '", policy,
           "' (fixed, step, exp, inv, multistep, poly, sigmoid)");
}

OPERATOR_SCHEMA(LearningRate).NumInputs(1).NumOutputs(1).InputsOnCPU({0})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>&) {
      return std::vector<TensorInfo>{TensorInfo::Of({1}, DataType::Float)};
    })
    .SetDoc("lr = base_lr * policy(iter); iter (int64 [1]) on CPU, lr (float [1]) on the op's device.");
REGISTER_CPU_OPERATOR(LearningRate, LearningRateOp<CPUContext>);
NO_GRADIENT(LearningRate);

}  // namespace hetnet
