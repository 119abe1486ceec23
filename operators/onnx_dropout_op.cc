#include "operators/onnx_dropout_op.h"

#include "core/gradient.h"
#include "core/seed.h"
#include "operators/half_compute.h"

namespace hetnet {

namespace {

uint32_t SeedOf(const OperatorBase& op) {
  if (!op.HasArgument("seed")) return NonDeterministicSeed();
  const int64_t seed = op.GetSingleArgument<int64_t>("seed", 0);
  HN_CHECK_KIND(kInvalidArgument, seed >= 0 && seed <= int64_t{0xffffffff}, op.type(), " '", op.def().name(),
                "': seed ", seed, " is out of range [0, 2^32 - 1] (NumPy's RandomState seeds)");
  return static_cast<uint32_t>(seed);
}

}  // namespace

OnnxDropoutOp::OnnxDropoutOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), rng_(SeedOf(*this)) {}

bool OnnxDropoutOp::Training() {
  if (InputSize() < 3) return false;
  const Tensor& t = Input(2);
  HN_CHECK_KIND(kInvalidArgument, t.dtype() == DataType::Bool && t.numel() == 1, type(), " '", def().name(),
                "': training_mode '", def().input(2), "' must be one bool, got ", DataTypeName(t.dtype()), " ",
                ShapeToString(t.shape()));
  return t.data<bool>()[0];
}

double OnnxDropoutOp::Ratio() {
  if (InputSize() < 2) return 0.5;
  const Tensor& r = Input(1);
  HN_CHECK_KIND(kInvalidArgument, r.numel() == 1 && (r.dtype() == DataType::Float || r.dtype() == DataType::Double),
                type(), " '", def().name(), "': ratio '", def().input(1), "' must be one float32 or float64, got ",
                DataTypeName(r.dtype()), " ", ShapeToString(r.shape()));
  const double v = r.dtype() == DataType::Float ? r.data<float>()[0] : r.data<double>()[0];
  HN_CHECK_KIND(kInvalidArgument, v >= 0 && v <= 1, type(), " '", def().name(), "': ratio '", def().input(1), "' is ",
                v, ", outside [0, 1]");
  return v;
}

void OnnxDropoutOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const bool training = Training();
  const double ratio = training ? Ratio() : 0.0;
  bool* mask = OutputSize() > 1 ? Output(1, X.shape(), DataType::Bool)->mutable_data<bool>() : nullptr;
  DispatchFloat32Or64(*this, {0}, [&](auto zero) {
    using T = decltype(zero);
    const T* x = X.data<T>();
    T* y = Output(0, X.shape(), X.dtype())->template mutable_data<T>();
    const T scale = ratio < 1 ? static_cast<T>(1.0 / (1.0 - ratio)) : T(0);
    for (int64_t i = 0; i < X.numel(); ++i) {
      const bool keep = !training || rng_.Uniform() >= ratio;
      y[i] = keep ? (training ? x[i] * scale : x[i]) : T(0);
      if (mask) mask[i] = keep;
    }
  });
}

OPERATOR_SCHEMA(OnnxDropout)
    .NumInputs(1, 3)
    .NumOutputs(1, 2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{in[0]};
      if (def.output_size() > 1)
        out.push_back(in[0].known ? TensorInfo::Of(in[0].dims, DataType::Bool) : TensorInfo::Unknown());
      return out;
    })
    .SetDoc("ONNX Dropout with a run-time training_mode (input 2) and ratio (input 1); mask output 1. "
            "Arg seed: NumPy RandomState(seed).uniform draws.");
REGISTER_CPU_OPERATOR(OnnxDropout, OnnxDropoutOp);
NO_GRADIENT(OnnxDropout);

}  // namespace hetnet
