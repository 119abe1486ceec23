// SpatialBN on CPU: schemas, gradient maker (Caffe2's GetSpatialBNGradient) and float64-accumulating
// per-channel loops.
#include "operators/spatial_bn_op.h"

#include <cmath>

#include "core/gradient.h"

namespace hetnet {

template <>
void BNApply<CPUContext>(const BNDims& d, const float* x, const float* mean, const float* inv_std, const float* scale,
                         const float* bias, float* y, CPUContext*) {
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t c = 0; c < d.C; ++c) {
      const float a = scale[c] * inv_std[c], b = bias[c] - mean[c] * a;
      const float* xp = x + (n * d.C + c) * d.HW;
      float* yp = y + (n * d.C + c) * d.HW;
      for (int64_t k = 0; k < d.HW; ++k) yp[k] = xp[k] * a + b;
    }
}

// With d.N == 0 (and d.HW == 0), x is a variance [C]: only inv_std = 1 / sqrt(x + eps) is computed.
template <>
void BNMoments<CPUContext>(const BNDims& d, const float* x, float eps, float momentum, float* mean, float* inv_std,
                           float* running_mean, float* running_var, CPUContext*) {
  if (d.N == 0) {
    for (int64_t c = 0; c < d.C; ++c) inv_std[c] = static_cast<float>(1.0 / std::sqrt(double(x[c]) + eps));
    return;
  }
  const double cnt = static_cast<double>(d.N * d.HW);
  for (int64_t c = 0; c < d.C; ++c) {
    double s = 0, ss = 0;
    for (int64_t n = 0; n < d.N; ++n) {
      const float* xp = x + (n * d.C + c) * d.HW;
      for (int64_t k = 0; k < d.HW; ++k) s += xp[k];
    }
    const double m = s / cnt;
    for (int64_t n = 0; n < d.N; ++n) {
      const float* xp = x + (n * d.C + c) * d.HW;
      for (int64_t k = 0; k < d.HW; ++k) ss += (xp[k] - m) * (xp[k] - m);
    }
    const double var = ss / cnt;
    mean[c] = static_cast<float>(m);
    inv_std[c] = static_cast<float>(1.0 / std::sqrt(var + eps));
    running_mean[c] = static_cast<float>(momentum * running_mean[c] + (1.0 - momentum) * m);
    running_var[c] = static_cast<float>(momentum * running_var[c] + (1.0 - momentum) * var);
  }
}

template <>
void BNBackward<CPUContext>(const BNDims& d, bool is_test, const float* x, const float* scale, const float* dy,
                            const float* mean, const float* inv_std, float* dx, float* dscale, float* dbias,
                            CPUContext*) {
  const double cnt = static_cast<double>(d.N * d.HW);
  for (int64_t c = 0; c < d.C; ++c) {
    double db = 0, ds = 0;
    for (int64_t n = 0; n < d.N; ++n) {
      const int64_t off = (n * d.C + c) * d.HW;
      for (int64_t k = 0; k < d.HW; ++k) {
        db += dy[off + k];
        ds += dy[off + k] * (x[off + k] - mean[c]) * inv_std[c];
      }
    }
    dbias[c] = static_cast<float>(db);
    dscale[c] = static_cast<float>(ds);
    for (int64_t n = 0; n < d.N; ++n) {
      const int64_t off = (n * d.C + c) * d.HW;
      for (int64_t k = 0; k < d.HW; ++k) {
        if (is_test) {
          dx[off + k] = dy[off + k] * scale[c] * inv_std[c];
        } else {
          const double xhat = (x[off + k] - mean[c]) * inv_std[c];
          dx[off + k] = static_cast<float>(scale[c] * inv_std[c] * (dy[off + k] - db / cnt - xhat * ds / cnt));
        }
      }
    }
  }
}

OPERATOR_SCHEMA(SpatialBN)
    .NumInputs(5)
    .NumOutputs(1, 5)
    .AllowInplace({{0, 0}})
    .EnforceInplace({{3, 1}, {4, 2}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{in[0]};
      for (int o = 1; o < def.output_size(); ++o) out.push_back(in[1]);
      return out;
    })
    .SetDoc("Spatial batch normalization (NCHW). Inputs X, scale, bias, mean, var; training outputs Y, "
            "running_mean, running_var (in place with inputs 3, 4), saved_mean, saved_inv_std. Args "
            "is_test, epsilon (1e-5), momentum (0.9).");
OPERATOR_SCHEMA(SpatialBNGradient)
    .NumInputs(5)
    .NumOutputs(3)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[1], in[1]};
    });

REGISTER_CPU_OPERATOR(SpatialBN, SpatialBNOp<CPUContext>);
REGISTER_CPU_OPERATOR(SpatialBNGradient, SpatialBNGradientOp<CPUContext>);

class GetSpatialBNGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const bool is_test = ArgumentHelper(Def()).GetSingleArgument<int>("is_test", 0) != 0;
    std::vector<std::string> in = is_test ? std::vector<std::string>{I(0), I(1), GO(0), I(3), I(4)}
                                          : std::vector<std::string>{I(0), I(1), GO(0), O(3), O(4)};
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("SpatialBNGradient", in, {GI(0), GI(1), GI(2)}, args)};
  }
};
REGISTER_GRADIENT(SpatialBN, GetSpatialBNGradient);

}  // namespace hetnet
