#include "operators/causal_conv_with_state_op.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

CausalConvWithStateOp::CausalConvWithStateOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      has_bias_(GetSingleArgument<int64_t>("has_bias", 0) != 0),
      has_past_(GetSingleArgument<int64_t>("has_past", 0) != 0) {
  const std::string act = GetSingleArgument<std::string>("activation", "none");
  HN_ENFORCE(act == "none" || act == "silu" || act == "swish", def.type(), ": activation '", act,
             "'; none, silu or swish is required");
  silu_ = act != "none";
  HN_ENFORCE(def.input_size() == 2 + has_bias_ + has_past_, def.type(), ": has_bias/has_past say ",
             2 + has_bias_ + has_past_, " inputs, the op has ", def.input_size());
}

void CausalConvWithStateOp::RunOnDevice() {
  std::vector<int> same;
  for (int i = 1; i < InputSize(); ++i) same.push_back(i);
  DispatchFloatCompute(*this, same, [this](auto t, auto c) { Compute<decltype(t), decltype(c)>(); });
}

template <typename T, typename C>
void CausalConvWithStateOp::Compute() {
  const Tensor &X = Input(0), &W = Input(1);
  auto blob = [&](int i) { return std::string(" ('") + def().input(i) + "')"; };
  HN_ENFORCE(X.ndim() == 3, type(), ": input", blob(0), " has shape ", X.ShapeString(),
             "; 3-D [batch, channels, length] is required");
  const int64_t B = X.dim(0), Ch = X.dim(1), L = X.dim(2);
  HN_ENFORCE(W.ndim() == 3 && W.dim(0) == Ch && W.dim(1) == 1 && W.dim(2) >= 1, type(), ": weight", blob(1),
             " has shape ", W.ShapeString(), "; [", Ch, ", 1, k >= 1] (depthwise) is required");
  const int64_t k = W.dim(2), P = k - 1 + L;
  const T* bias = nullptr;
  const T* past = nullptr;
  if (has_bias_) {
    HN_ENFORCE(Input(2).ndim() == 1 && Input(2).dim(0) == Ch, type(), ": bias", blob(2), " has shape ",
               Input(2).ShapeString(), "; [", Ch, "] is required");
    bias = Input(2).data<T>();
  }
  if (has_past_) {
    const int i = 2 + has_bias_;
    HN_ENFORCE(Input(i).sizes() == std::vector<int64_t>({B, Ch, k - 1}), type(), ": past_state", blob(i),
               " has shape ", Input(i).ShapeString(), "; [", B, ", ", Ch, ", ", k - 1, "] is required");
    past = Input(i).data<T>();
  }
  const T *x = X.data<T>(), *w = W.data<T>();
  T* y = Output(0, {B, Ch, L}, X.dtype())->template mutable_data<T>();
  T* present = OutputSize() > 1 ? Output(1, {B, Ch, k - 1}, X.dtype())->template mutable_data<T>() : nullptr;
  std::vector<C> padded(static_cast<size_t>(P));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < Ch; ++c) {
      const int64_t row = b * Ch + c;
      for (int64_t j = 0; j < k - 1; ++j) padded[j] = past ? ToCompute<C>(past[row * (k - 1) + j]) : C(0);
      for (int64_t t = 0; t < L; ++t) padded[k - 1 + t] = ToCompute<C>(x[row * L + t]);
      for (int64_t t = 0; t < L; ++t) {
        C acc = bias ? ToCompute<C>(bias[c]) : C(0);
        for (int64_t j = 0; j < k; ++j) acc += ToCompute<C>(w[c * k + j]) * padded[t + j];
        acc = RoundTo<T>(acc);
        if (silu_) acc = acc / (C(1) + std::exp(-acc));
        y[row * L + t] = FromCompute<T, C>(acc);
      }
      if (present)
        for (int64_t j = 0; j < k - 1; ++j) present[row * (k - 1) + j] = FromCompute<T, C>(padded[L + j]);
    }
}

OPERATOR_SCHEMA(CausalConvWithState).NumInputs(2, 4).NumOutputs(1, 2)
    .SetDoc("ONNX's CausalConvWithState (opset 27): depthwise causal 1-D convolution over [past_state, input], "
            "optional bias and SiLU; present_state = the last k-1 padded steps. Optional inputs present as args "
            "has_bias, has_past say. float32/64/16, bfloat16. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(CausalConvWithState, CausalConvWithStateOp);

}  // namespace hetnet
