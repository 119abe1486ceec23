// LRN on CPU: schemas, gradient maker (LRNGradient(X, Y, dY) -> dX) and CPU loops over lrn_op.h's
// per-element math.
#include "operators/lrn_op.h"

#include "core/gradient.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace hetnet {

namespace {
// Window sums over channels kept as running sums (LRNWindowSum) while c advances: O(numel)
// whatever `size` is (summing each window afresh costs O(min(size, C)) per element, which a
// hostile `size` and a wide C would turn into hours), with HW sums of scratch. For channel c the sum covers
// channels [c + lo, c + hi) clamped to [0, C); v2 squares the values first.
void SlidingChannelSums(const LRNParams& p, const float* v, bool square, int64_t lo, int64_t hi,
                        std::vector<LRNWindowSum>* acc,
                        const std::function<void(int64_t c, const LRNWindowSum* sums)>& use) {
  acc->assign(static_cast<size_t>(p.HW), LRNWindowSum{});
  LRNWindowSum* a = acc->data();
  auto add = [&](int64_t k, int sign) {
    if (k < 0 || k >= p.C) return;
    const float* row = v + k * p.HW;
    for (int64_t hw = 0; hw < p.HW; ++hw) {
      const double x = row[hw];
      a[hw].Add(square ? x * x : x, sign);
    }
  };
  for (int64_t k = std::max<int64_t>(lo, 0); k < std::min<int64_t>(hi, p.C); ++k) add(k, 1);  // window of c = 0
  for (int64_t c = 0; c < p.C; ++c) {
    use(c, a);
    add(c + lo, -1);  // leaves the window of c + 1
    add(c + hi, 1);   // enters it
  }
}

void ScaleOfImage(const LRNParams& p, const float* x, float* scale, std::vector<LRNWindowSum>* acc) {
  const float k = p.alpha / p.size;
  SlidingChannelSums(p, x, true, -static_cast<int64_t>(p.pre_pad), static_cast<int64_t>(p.size) - p.pre_pad, acc,
                     [&](int64_t c, const LRNWindowSum* sums) {
                       for (int64_t hw = 0; hw < p.HW; ++hw)
                         scale[c * p.HW + hw] = p.bias + k * static_cast<float>(sums[hw].Value());
                     });
}
}  // namespace

template <>
void LRNForward<CPUContext>(const LRNParams& p, const float* x, float* y, float* scale, CPUContext*) {
  const int64_t image = p.C * p.HW;
  std::vector<LRNWindowSum> acc;
  for (int64_t n = 0; n < p.N; ++n) {
    ScaleOfImage(p, x + n * image, scale + n * image, &acc);
    for (int64_t i = n * image; i < (n + 1) * image; ++i) y[i] = x[i] * std::pow(scale[i], -p.beta);
  }
}

template <>
void LRNBackward<CPUContext>(const LRNParams& p, const float* x, const float* y, const float* dy, float* dx,
                             CPUContext*) {
  // dX[c] = dY[c] scale[c]^-beta - 2 alpha beta / size * X[c] * sum_{c' in [c + pre_pad - size + 1, c + pre_pad]} r[c'],
  // r = dY Y / scale.
  const int64_t image = p.C * p.HW;
  std::vector<float> scale(static_cast<size_t>(image)), r(static_cast<size_t>(image));
  std::vector<LRNWindowSum> acc;
  const float k = 2.f * p.alpha * p.beta / p.size;
  for (int64_t n = 0; n < p.N; ++n) {
    const int64_t o = n * image;
    ScaleOfImage(p, x + o, scale.data(), &acc);
    for (int64_t i = 0; i < image; ++i) r[i] = dy[o + i] * y[o + i] / scale[i];
    SlidingChannelSums(p, r.data(), false, static_cast<int64_t>(p.pre_pad) - p.size + 1,
                       static_cast<int64_t>(p.pre_pad) + 1, &acc, [&](int64_t c, const LRNWindowSum* sums) {
                         for (int64_t hw = 0; hw < p.HW; ++hw) {
                           const int64_t i = c * p.HW + hw;
                           dx[o + i] = dy[o + i] * std::pow(scale[i], -p.beta) - k * x[o + i] * static_cast<float>(sums[hw].Value());
                         }
                       });
  }
}

OPERATOR_SCHEMA(LRN)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>(def.output_size(), in[0]);
    })
    .SetDoc("Local response normalization across channels (NCHW): outputs Y and scale. Args size, alpha, beta, "
            "bias (1).");
OPERATOR_SCHEMA(LRNGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(LRN, LRNOp<CPUContext>);
REGISTER_CPU_OPERATOR(LRNGradient, LRNGradientOp<CPUContext>);

class GetLRNGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("LRNGradient", {I(0), O(0), GO(0)}, {GI(0)}, args)};
  }
};
REGISTER_GRADIENT(LRN, GetLRNGradient);

}  // namespace hetnet
