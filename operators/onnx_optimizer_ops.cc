#include "operators/onnx_optimizer_ops.h"

#include <cmath>
#include <vector>

#include "core/gradient.h"
#include "operators/half_compute.h"

namespace hetnet {

namespace {

double ScalarAsDouble(const OperatorBase& op, int i, const char* what) {
  const Tensor& t = op.InputTensor(i);
  HN_CHECK_KIND(kInvalidArgument, t.numel() == 1 && (t.dtype() == DataType::Float || t.dtype() == DataType::Double),
                op.type(), " '", op.def().name(), "': ", what, " '", op.def().input(i),
                "' must be one float32 or float64, got ", DataTypeName(t.dtype()), " ", ShapeToString(t.shape()));
  return t.dtype() == DataType::Float ? t.data<float>()[0] : t.data<double>()[0];
}

}  // namespace

template <OnnxOptimizer K>
OnnxOptimizerOp<K>::OnnxOptimizerOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      states_(K == OnnxOptimizer::kAdam ? 2 : 1),
      alpha_(GetSingleArgument<float>("alpha", K == OnnxOptimizer::kAdam ? 0.9f : 0.f)),
      beta_(GetSingleArgument<float>("beta", K == OnnxOptimizer::kAdam ? 0.999f : 0.f)),
      epsilon_(GetSingleArgument<float>("epsilon", K == OnnxOptimizer::kAdam ? 1e-6f : 0.f)),
      decay_(GetSingleArgument<float>("decay_factor", 0.f)),
      norm_(GetSingleArgument<float>("norm_coefficient", 0.f)),
      norm_post_(GetSingleArgument<float>("norm_coefficient_post", 0.f)),
      nesterov_(GetSingleArgument<std::string>("mode", "standard") == "nesterov") {
  const std::string mode = GetSingleArgument<std::string>("mode", "standard");
  HN_CHECK_KIND(kInvalidArgument, mode == "standard" || mode == "nesterov", type(), " '", def.name(), "': mode '",
                mode, "' is neither \"standard\" nor \"nesterov\"");
  const int per = 2 + states_;  // X, G, then the states
  HN_CHECK_KIND(kInvalidArgument, InputSize() > 2 && (InputSize() - 2) % per == 0, type(), " '", def.name(), "': ",
                InputSize(), " inputs; expected R, T, then ", per, " groups of n tensors");
  const int n = (InputSize() - 2) / per;
  HN_CHECK_KIND(kInvalidArgument, OutputSize() == n * (1 + states_), type(), " '", def.name(), "': ", OutputSize(),
                " outputs for ", n, " tensors; expected ", n * (1 + states_));
}

template <OnnxOptimizer K>
void OnnxOptimizerOp<K>::RunOnDevice() {
  const double R = ScalarAsDouble(*this, 0, "the learning rate");
  const Tensor& Tt = Input(1);
  HN_CHECK_KIND(kInvalidArgument, Tt.numel() == 1 && Tt.dtype() == DataType::Int64, type(), " '", def().name(),
                "': the update count '", def().input(1), "' must be one int64, got ", DataTypeName(Tt.dtype()));
  const double T = static_cast<double>(Tt.data<int64_t>()[0]);
  const int n = (InputSize() - 2) / (2 + states_);
  double r = R;  // the step's learning rate
  if (K == OnnxOptimizer::kAdagrad) r = R / (1 + T * decay_);
  if (K == OnnxOptimizer::kAdam && T > 0) r = R * std::sqrt(1 - std::pow(beta_, T)) / (1 - std::pow(alpha_, T));
  const double beta_now = K == OnnxOptimizer::kMomentum && !(T > 0) ? 1.0 : beta_;
  for (int k = 0; k < n; ++k) {
    std::vector<int> group{2 + k, 2 + n + k};  // X, G, states
    for (int s = 0; s < states_; ++s) group.push_back(2 + (2 + s) * n + k);
    const Tensor& X = Input(group[0]);
    for (int i : group)
      HN_CHECK_KIND(kInvalidArgument, Input(i).shape() == X.shape(), type(), " '", def().name(), "': '", def().input(i),
                    "' has shape ", ShapeToString(Input(i).shape()), " but '", def().input(group[0]), "' has ",
                    ShapeToString(X.shape()));
    DispatchFloat32Or64(*this, group, [&](auto zero) {
      using F = decltype(zero);
      const F *x = X.data<F>(), *g = Input(group[1]).template data<F>(), *s0 = Input(group[2]).template data<F>();
      const F* s1 = states_ > 1 ? Input(group[3]).template data<F>() : nullptr;
      F* xo = Output(k, X.shape(), X.dtype())->template mutable_data<F>();
      F* o0 = Output(n + k, X.shape(), X.dtype())->template mutable_data<F>();
      F* o1 = states_ > 1 ? Output(2 * n + k, X.shape(), X.dtype())->template mutable_data<F>() : nullptr;
      for (int64_t i = 0; i < X.numel(); ++i) {
        const double xi = x[i], gr = norm_ * xi + static_cast<double>(g[i]);
        double xn;
        if (K == OnnxOptimizer::kAdagrad) {
          const double h = static_cast<double>(s0[i]) + gr * gr;
          xn = xi - r * gr / (std::sqrt(h) + epsilon_);
          o0[i] = static_cast<F>(h);
        } else if (K == OnnxOptimizer::kMomentum) {
          const double v = alpha_ * static_cast<double>(s0[i]) + beta_now * gr;
          xn = nesterov_ ? xi - r * (gr + alpha_ * v) : xi - r * v;
          o0[i] = static_cast<F>(v);
        } else {
          const double v = alpha_ * static_cast<double>(s0[i]) + (1 - alpha_) * gr;
          const double h = beta_ * static_cast<double>(s1[i]) + (1 - beta_) * gr * gr;
          xn = (1 - norm_post_) * (xi - r * v / (std::sqrt(h) + epsilon_));
          o0[i] = static_cast<F>(v);
          o1[i] = static_cast<F>(h);
        }
        xo[i] = static_cast<F>(xn);
      }
    });
  }
}

#define HN_ONNX_OPTIMIZER(Name, Kind, Doc)               \
  OPERATOR_SCHEMA(Name).NumInputs(3, 1 << 20).NumOutputs(1, 1 << 20).SetDoc(Doc); \
  REGISTER_CPU_OPERATOR(Name, OnnxOptimizerOp<OnnxOptimizer::Kind>);             \
  NO_GRADIENT(Name)

HN_ONNX_OPTIMIZER(OnnxAdagrad, kAdagrad, "ONNX's Adagrad (ai.onnx.preview.training): see onnx_optimizer_ops.h");
HN_ONNX_OPTIMIZER(OnnxMomentum, kMomentum, "ONNX's Momentum (ai.onnx.preview.training): see onnx_optimizer_ops.h");
HN_ONNX_OPTIMIZER(OnnxAdam, kAdam, "ONNX's Adam (ai.onnx.preview.training): see onnx_optimizer_ops.h");
#undef HN_ONNX_OPTIMIZER

}  // namespace hetnet
