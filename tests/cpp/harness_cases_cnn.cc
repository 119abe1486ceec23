// Harness cases for the CNN operators: Conv, ConvTranspose, MaxPool, AveragePool, SpatialBN, LRN,
// Dropout. The references are naive float64 loops over an explicitly written geometry (stride,
// pads, output size worked out by hand for the legacy-padding cases), independent of
// operators/conv_pool_shape.h.
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

struct G {  // hand-written geometry
  int kh, kw, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1, group = 1;
  int64_t oh = -1, ow = -1;  // -1: 1 + (in + pads - dk) / stride
};
int64_t Out(int64_t in, int k, int s, int p0, int p1, int d, int64_t given) {
  return given >= 0 ? given : 1 + (in + p0 + p1 - (d * (k - 1) + 1)) / s;
}

RefFn ConvRef(G g) {
  return [g](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor &X = in[0], &F = in[1];
    const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3), M = F.dim(0);
    const int64_t OH = Out(H, g.kh, g.sh, g.pt, g.pb, g.dh, g.oh), OW = Out(W, g.kw, g.sw, g.pl, g.pr, g.dw, g.ow);
    const int64_t Cg = C / g.group, Mg = M / g.group;
    RefTensor Y({N, M, OH, OW});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double s = in.size() > 2 ? in[2][m] : 0.0;
            const int64_t gr = m / Mg;
            for (int64_t c = 0; c < Cg; ++c)
              for (int i = 0; i < g.kh; ++i)
                for (int j = 0; j < g.kw; ++j) {
                  const int64_t h = oh * g.sh - g.pt + i * g.dh, w = ow * g.sw - g.pl + j * g.dw;
                  if (h < 0 || h >= H || w < 0 || w >= W) continue;
                  s += X[((n * C + gr * Cg + c) * H + h) * W + w] * F[((m * Cg + c) * g.kh + i) * g.kw + j];
                }
            Y[((n * M + m) * OH + oh) * OW + ow] = s;
          }
    return RefTensors{Y};
  };
}

// ConvTranspose: filter [C, M/group, kh, kw]; Y[n, m, h*s - p + i, ...] += X[n, c, h, w] * F[c, m', i, j].
RefFn ConvTransposeRef(G g, int adj_h = 0, int adj_w = 0) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor &X = in[0], &F = in[1];
    const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3), Mg = F.dim(1), M = Mg * g.group;
    const int64_t OH = (H - 1) * g.sh + g.kh + adj_h - g.pt - g.pb, OW = (W - 1) * g.sw + g.kw + adj_w - g.pl - g.pr;
    const int64_t Cg = C / g.group;
    RefTensor Y({N, M, OH, OW});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < OH * OW; ++k) Y[(n * M + m) * OH * OW + k] = in.size() > 2 ? in[2][m] : 0.0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w)
            for (int64_t mg = 0; mg < Mg; ++mg)
              for (int i = 0; i < g.kh; ++i)
                for (int j = 0; j < g.kw; ++j) {
                  const int64_t oh = h * g.sh - g.pt + i, ow = w * g.sw - g.pl + j;
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                  const int64_t m = (c / Cg) * Mg + mg;
                  Y[((n * M + m) * OH + oh) * OW + ow] +=
                      X[((n * C + c) * H + h) * W + w] * F[((c * Mg + mg) * g.kh + i) * g.kw + j];
                }
    return RefTensors{Y};
  };
}

// Caffe2 pooling: window clipped to the input; average over the clipped window unless
// count_include_pad (then kh * kw).
RefFn PoolRef(G g, bool is_max, bool count_include_pad = false) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor& X = in[0];
    const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3);
    const int64_t OH = Out(H, g.kh, g.sh, g.pt, g.pb, 1, g.oh), OW = Out(W, g.kw, g.sw, g.pl, g.pr, 1, g.ow);
    RefTensor Y({N, C, OH, OW});
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = is_max ? -1e300 : 0.0;
          int64_t cnt = 0;
          for (int64_t h = oh * g.sh - g.pt; h < oh * g.sh - g.pt + g.kh; ++h)
            for (int64_t w = ow * g.sw - g.pl; w < ow * g.sw - g.pl + g.kw; ++w) {
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              const double v = X[(nc * H + h) * W + w];
              acc = is_max ? std::max(acc, v) : acc + v;
              ++cnt;
            }
          if (!is_max) acc /= count_include_pad ? g.kh * g.kw : cnt;
          Y[(nc * OH + oh) * OW + ow] = acc;
        }
    return RefTensors{Y};
  };
}

Case ConvCase(const std::string& label, std::vector<int64_t> x, int64_t m, G g, std::vector<caffe2::Argument> args,
              bool bias = true) {
  std::vector<InputSpec> ins{In(x), In({m, x[1] / g.group, g.kh, g.kw})};
  std::vector<std::string> names{"X", "W"};
  if (bias) { ins.push_back(In({m})); names.push_back("b"); }
  return Case(label).Def(Op("Conv", names, {"Y"}, args)).Inputs(ins).Ref(ConvRef(g)).Tol(1e-4);
}

}  // namespace

HN_OP_CASES(Conv) {
  Case half = ConvCase("float16 tensor cores (CUDA only)", {2, 8, 6, 6}, 16, G{3, 3, 1, 1, 1, 1, 1, 1},
                       {Arg("kernel", 3), Arg("pad", 1)});
  for (auto& in : half.inputs) in.dtype = DataType::Float16;
  half.reference = [f = half.reference](const caffe2::OperatorDef& d, const RefTensors& in) {
    RefTensors r = f(d, in);
    r[0].dtype = DataType::Float16;
    return r;
  };
  half.GpuOnly().NoGrad().NoShapeCheck();
  return {
      half,
      ConvCase("k3 p1", {2, 3, 5, 5}, 4, G{3, 3, 1, 1, 1, 1, 1, 1}, {Arg("kernel", 3), Arg("pad", 1)}),
      ConvCase("k3 s2 no pad", {1, 2, 7, 6}, 3, G{3, 3, 2, 2}, {Arg("kernel", 3), Arg("stride", 2)}),
      ConvCase("kernel from filter, 1x1", {2, 4, 3, 3}, 5, G{1, 1}, {}),
      ConvCase("k2x3 strides, pads t/l/b/r", {1, 2, 6, 7}, 3, G{2, 3, 2, 1, 1, 0, 2, 1},
               {Arg("kernel_h", 2), Arg("kernel_w", 3), Ints("strides", {2, 1}), Arg("pad_t", 1), Arg("pad_l", 0),
                Arg("pad_b", 2), Arg("pad_r", 1)}),
      ConvCase("dilation 2", {1, 2, 7, 7}, 2, G{3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, {Arg("kernel", 3), Arg("pad", 2), Arg("dilation", 2)}),
      ConvCase("group 2", {2, 4, 5, 5}, 6, G{3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2}, {Arg("kernel", 3), Arg("pad", 1), Arg("group", 2)}),
      ConvCase("no bias", {1, 3, 4, 4}, 2, G{3, 3}, {Arg("kernel", 3)}, false),
      // legacy VALID: pads 0, out = (5 - 3 + 2) / 2 = 2
      ConvCase("legacy VALID s2", {1, 2, 5, 5}, 2, G{3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 1, 2, 2},
               {Arg("kernel", 3), Arg("stride", 2), Arg("legacy_pad", 1)}),
      // legacy SAME, in 6, s 2, k 3: target 3, pad_needed (3-1)*2+3-6 = 1 -> head 0, tail 1
      ConvCase("legacy SAME s2", {1, 2, 6, 6}, 2, G{3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 1, 3, 3},
               {Arg("kernel", 3), Arg("stride", 2), Arg("legacy_pad", 2)}),
  };
}

HN_OP_CASES(ConvTranspose) {
  auto ct = [](const std::string& label, std::vector<int64_t> x, int64_t mg, G g, std::vector<caffe2::Argument> args,
               int adj = 0) {
    return Case(label)
        .Def(Op("ConvTranspose", {"X", "W", "b"}, {"Y"}, args))
        .Inputs({In(x), In({x[1], mg, g.kh, g.kw}), In({mg * g.group})})
        .Ref(ConvTransposeRef(g, adj, adj));
  };
  return {
      ct("k3 s2 p1", {1, 3, 3, 3}, 2, G{3, 3, 2, 2, 1, 1, 1, 1}, {Arg("kernel", 3), Arg("stride", 2), Arg("pad", 1)}),
      ct("k2 s2", {2, 2, 3, 2}, 3, G{2, 2, 2, 2}, {Arg("kernel", 2), Arg("stride", 2)}),
      ct("k3 s2 p1 adj 1", {1, 2, 3, 3}, 2, G{3, 3, 2, 2, 1, 1, 1, 1},
         {Arg("kernel", 3), Arg("stride", 2), Arg("pad", 1), Arg("adj", 1)}, 1),
      ct("group 2", {1, 4, 3, 3}, 1, G{3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2}, {Arg("kernel", 3), Arg("group", 2)}),
  };
}

HN_OP_CASES(Pool) {
  auto pool = [](const std::string& type, const std::string& label, std::vector<int64_t> x, G g,
                 std::vector<caffe2::Argument> args, bool cip = false) {
    const bool is_max = type == "MaxPool";
    Case c(label);
    c.Def(Op(type, {"X"}, {"Y"}, args)).Inputs({is_max ? In(x).Distinct() : In(x)}).Ref(PoolRef(g, is_max, cip));
    if (is_max) c.GradTol(1e-2, 1e-3);
    return c;
  };
  std::vector<Case> cs;
  for (std::string t : {"MaxPool", "AveragePool"}) {
    cs.push_back(pool(t, "k2 s2", {2, 3, 4, 6}, G{2, 2, 2, 2}, {Arg("kernel", 2), Arg("stride", 2)}));
    cs.push_back(pool(t, "k3 s1 p1", {1, 2, 5, 5}, G{3, 3, 1, 1, 1, 1, 1, 1}, {Arg("kernel", 3), Arg("pad", 1)}));
    cs.push_back(pool(t, "k3 s2 pads t/l/b/r", {1, 2, 6, 7}, G{3, 2, 2, 2, 1, 0, 0, 1},
                      {Arg("kernel_h", 3), Arg("kernel_w", 2), Arg("stride", 2), Arg("pad_t", 1), Arg("pad_l", 0),
                       Arg("pad_b", 0), Arg("pad_r", 1)}));
    // Caffe ceil mode: in 6, k 3, s 2, pad 0 -> ceil(3/2 + 1) = 3 (floor mode 2), pad_tail 2.
    cs.push_back(pool(t, "CAFFE_LEGACY_POOLING k3 s2", {1, 2, 6, 6}, G{3, 3, 2, 2, 0, 0, 2, 2, 1, 1, 1, 3, 3},
                      {Arg("kernel", 3), Arg("stride", 2), Arg("legacy_pad", 3)}));
    // with pad 1: in 6 -> ceil((6+2-3)/2 + 1) = 4; last start 6 >= 6+1? no -> 4; floor 3; tail 1+2 = 3.
    cs.push_back(pool(t, "CAFFE_LEGACY_POOLING k3 s2 p1", {1, 1, 6, 6}, G{3, 3, 2, 2, 1, 1, 3, 3, 1, 1, 1, 4, 4},
                      {Arg("kernel", 3), Arg("stride", 2), Arg("pad", 1), Arg("legacy_pad", 3)}));
    cs.push_back(pool(t, "global + CAFFE_LEGACY_POOLING (SqueezeNet)", {2, 3, 5, 4}, G{5, 4},
                      {Arg("global_pooling", 1), Arg("legacy_pad", 3)}));
  }
  cs.push_back(pool("AveragePool", "count_include_pad k3 p1", {1, 2, 5, 5}, G{3, 3, 2, 2, 1, 1, 1, 1},
                    {Arg("kernel", 3), Arg("stride", 2), Arg("pad", 1), Arg("count_include_pad", 1)}, true));
  return cs;
}

namespace {
// SpatialBN reference. Training: biased batch statistics; running = m * running + (1 - m) * batch.
RefFn SpatialBNRef(bool is_test, double eps = 1e-5, double momentum = 0.9) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor& X = in[0];
    const int64_t N = X.dim(0), C = X.dim(1), HW = X.numel() / (N * C);
    RefTensor Y(X.shape), rm({C}), rv({C}), sm({C}), si({C});
    for (int64_t c = 0; c < C; ++c) {
      double mean = in[3][c], var = in[4][c];
      if (!is_test) {
        double s = 0, ss = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < HW; ++k) s += X[(n * C + c) * HW + k];
        mean = s / (N * HW);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < HW; ++k) ss += std::pow(X[(n * C + c) * HW + k] - mean, 2);
        var = ss / (N * HW);
        rm[c] = momentum * in[3][c] + (1 - momentum) * mean;
        rv[c] = momentum * in[4][c] + (1 - momentum) * var;
        sm[c] = mean;
        si[c] = 1 / std::sqrt(var + eps);
      }
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < HW; ++k) {
          const int64_t i = (n * C + c) * HW + k;
          Y[i] = (X[i] - mean) / std::sqrt(var + eps) * in[1][c] + in[2][c];
        }
    }
    if (is_test) return RefTensors{Y};
    return RefTensors{Y, rm, rv, sm, si};
  };
}

RefFn LRNRef(int size, double alpha, double beta, double bias) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor& X = in[0];
    const int64_t N = X.dim(0), C = X.dim(1), HW = X.numel() / (N * C);
    const int pre = (size - 1) / 2;
    RefTensor Y(X.shape), S(X.shape);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < HW; ++k) {
          double s = 0;
          for (int64_t j = c - pre; j < c - pre + size; ++j)
            if (j >= 0 && j < C) s += std::pow(X[(n * C + j) * HW + k], 2);
          const int64_t i = (n * C + c) * HW + k;
          S[i] = bias + alpha / size * s;
          Y[i] = X[i] * std::pow(S[i], -beta);
        }
    return RefTensors{Y, S};
  };
}

// Dropout (training): Y == X * mask / (1 - ratio), and the kept fraction is plausible.
CheckFn DropoutCheck(double ratio) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in, const RefTensors& out) -> std::string {
    if (out.size() < 2 || out[1].dtype != DataType::Bool) return "mask output missing or not bool";
    int64_t kept = 0;
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      const double want = out[1][i] != 0 ? in[0][i] / (1 - ratio) : 0.0;
      kept += out[1][i] != 0;
      if (std::abs(out[0][i] - want) > 1e-5 * std::max(1.0, std::abs(want)))
        return "Y[" + std::to_string(i) + "] = " + std::to_string(out[0][i]) + ", expected " + std::to_string(want);
    }
    const double frac = static_cast<double>(kept) / in[0].numel();
    if (std::abs(frac - (1 - ratio)) > 0.1) return "kept fraction " + std::to_string(frac) + " far from " + std::to_string(1 - ratio);
    return "";
  };
}
}  // namespace

HN_OP_CASES(NormDropout) {
  const std::vector<std::string> bn_in{"X", "scale", "bias", "rm", "rv"};
  auto stats = [](int64_t c) { return std::vector<InputSpec>{In({c}).Range(-0.5, 0.5).NoGrad(), In({c}).Range(0.5, 1.5).NoGrad()}; };
  std::vector<InputSpec> bn_train{In({3, 4, 3, 2}).Range(-2, 2), In({4}).Range(0.5, 1.5), In({4})};
  for (auto& s : stats(4)) bn_train.push_back(s);
  std::vector<InputSpec> bn_test{In({2, 3, 2, 2}), In({3}).Range(0.5, 1.5), In({3})};
  for (auto& s : stats(3)) bn_test.push_back(s);
  return {
      Case("training").Def(Op("SpatialBN", bn_in, {"Y", "rm", "rv", "saved_mean", "saved_inv_std"}, {Arg("epsilon", 1e-4f), Arg("momentum", 0.8f)}))
          .Inputs(bn_train).Ref(SpatialBNRef(false, 1e-4, 0.8)).GradTol(2e-2, 1e-2),
      Case("is_test").Def(Op("SpatialBN", bn_in, {"Y"}, {Arg("is_test", 1)})).Inputs(bn_test).Ref(SpatialBNRef(true)),
      Case("size 5").Def(Op("LRN", {"X"}, {"Y", "scale"}, {Arg("size", 5), Arg("alpha", 0.2f), Arg("beta", 0.75f), Arg("bias", 1.5f)}))
          .Inputs({In({2, 7, 2, 3})}).Ref(LRNRef(5, 0.2f, 0.75f, 1.5f)),
      Case("size 4 (even)").Def(Op("LRN", {"X"}, {"Y", "scale"}, {Arg("size", 4), Arg("alpha", 0.5f), Arg("beta", 0.5f), Arg("bias", 2.0f)}))
          .Inputs({In({1, 6, 3, 3})}).Ref(LRNRef(4, 0.5f, 0.5f, 2.0f)),
      Case("size 3, Y only (cuDNN on CUDA)").Def(Op("LRN", {"X"}, {"Y"}, {Arg("size", 3), Arg("alpha", 1e-2f), Arg("beta", 0.75f), Arg("bias", 1.0f)}))
          .Inputs({In({2, 5, 3, 3}).Range(-3, 3)}).Ref(LRNRef(3, 1e-2f, 0.75f, 1.0f)),
      Case("training ratio 0.3").Def(Op("Dropout", {"X"}, {"Y", "mask"}, {Arg("ratio", 0.3f)}))
          .Inputs({In({20, 50})}).Check(DropoutCheck(0.3)).Random().NoGrad(),
      Case("is_test").Def(Op("Dropout", {"X"}, {"Y", "mask"}, {Arg("ratio", 0.3f), Arg("is_test", 1)}))
          .Inputs({In({4, 5})}).Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            return RefTensors{in[0], RefTensor(in[0].shape, std::vector<double>(in[0].numel(), 1.0), DataType::Bool)};
          }),
  };
}

}  // namespace harness
}  // namespace hetnet
