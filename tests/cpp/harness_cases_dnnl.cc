// Harness cases for the CPU engines of Conv, FC and FCTransposed: FC cases also run with engine
// "PACKED" (hetnet's packed-weight GEMM, operators/fc_op_packed.cc); every case runs once with engine
// "DNNL" (oneDNN, operators/*_dnnl.cc; the default engine of a build with it (inference nets run FC on PACKED); the plain cases in
// harness_cases_cnn.cc / harness_cases_core_ops.cc run it too) and once with engine "EIGEN" (an
// engine nobody registers, so the portable default kernel). The shapes cover both of the DNNL Conv's
// layouts (1x1 stride 1: plain NCHW; others: blocked), groups, dilation, asymmetric pads, batch 1
// and > 1, FC's single-row fallback and its oneDNN path. References: naive float64 loops with the
// geometry written out here, independent of operators/conv_pool_shape.h. Without oneDNN both
// columns run the default kernels.
#include <algorithm>

#include "tests/cpp/dnnl_test_reference.h"

namespace hetnet {
namespace harness {

// DnnlNaiveConv (tests/cpp/dnnl_test_reference.h), also used by the DNNL tests.
RefTensor DnnlNaiveConv(const RefTensor& X, const RefTensor& F, const RefTensor* b, const DnnlConvGeo& g) {
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3), M = F.dim(0);
  const int64_t OH = 1 + (H + g.pt + g.pb - (g.dh * (g.kh - 1) + 1)) / g.sh;
  const int64_t OW = 1 + (W + g.pl + g.pr - (g.dw * (g.kw - 1) + 1)) / g.sw;
  const int64_t Cg = C / g.group, Mg = M / g.group;
  RefTensor Y({N, M, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b ? (*b)[m] : 0.0;
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
  return Y;
}

namespace {

RefTensor ReluRef(RefTensor t, bool relu) {
  if (relu)
    for (int64_t i = 0; i < t.numel(); ++i) t[i] = std::max(t[i], 0.0);
  return t;
}

// With relu: fused_activation "Relu" (Y = Relu(op(X))); no gradient check (the gradient kernels
// know nothing of fused activations: the graph optimizer fuses inference nets only).
Case EngineConv(const char* engine, const std::string& label, std::vector<int64_t> x, int64_t m, DnnlConvGeo g,
                std::vector<caffe2::Argument> args, bool bias = true, bool relu = false) {
  if (relu) args.push_back(Arg("fused_activation", std::string("Relu")));
  std::vector<InputSpec> ins{In(x), In({m, x[1] / g.group, g.kh, g.kw})};
  std::vector<std::string> names{"X", "W"};
  if (bias) {
    ins.push_back(In({m}));
    names.push_back("b");
  }
  caffe2::OperatorDef def = Op("Conv", names, {"Y"}, args);
  def.set_engine(engine);
  Case c = Case(std::string(engine) + " " + label + (relu ? " fused Relu" : ""))
               .Def(def)
               .Inputs(ins)
               .Ref([g, relu](const caffe2::OperatorDef&, const RefTensors& in) {
                 return RefTensors{ReluRef(DnnlNaiveConv(in[0], in[1], in.size() > 2 ? &in[2] : nullptr, g), relu)};
               })
               .Tol(1e-4)
               .CpuOnly();
  if (relu) c.NoGrad();
  return c;
}

// FC (W [N, K]) or FCTransposed (W [K, N]); X [M, K].
Case EngineFC(const char* engine, bool transposed, int64_t M, int64_t K, int64_t N, bool relu = false) {
  std::vector<caffe2::Argument> args;
  if (relu) args.push_back(Arg("fused_activation", std::string("Relu")));
  caffe2::OperatorDef def = Op(transposed ? "FCTransposed" : "FC", {"X", "W", "b"}, {"Y"}, args);
  def.set_engine(engine);
  const std::string label = std::string(engine) + " " + std::to_string(M) + "x" + std::to_string(K) + " -> " +
                            std::to_string(N) + (relu ? " fused Relu" : "");
  Case c = Case(label);
  if (relu) c.NoGrad();
  return c
      .Def(def)
      .Inputs({In({M, K}), transposed ? In({K, N}) : In({N, K}), In({N})})
      .Ref([transposed, relu](const caffe2::OperatorDef&, const RefTensors& in) {
        const RefTensor &X = in[0], &W = in[1], &b = in[2];
        const int64_t M = X.dim(0), K = X.dim(1), N = b.dim(0);
        RefTensor Y({M, N});
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double s = b[n];
            for (int64_t k = 0; k < K; ++k) s += X[m * K + k] * (transposed ? W[k * N + n] : W[n * K + k]);
            Y[m * N + n] = relu ? std::max(s, 0.0) : s;
          }
        return RefTensors{Y};
      })
      .CpuOnly();
}

}  // namespace

HN_OP_CASES(ConvEngines) {
  std::vector<Case> out;
  for (const char* e : {"DNNL", "EIGEN"}) {
    out.push_back(EngineConv(e, "k3 p1 b1", {1, 3, 6, 6}, 8, DnnlConvGeo{3, 3, 1, 1, 1, 1, 1, 1},
                             {Arg("kernel", 3), Arg("pad", 1)}));
    out.push_back(EngineConv(e, "k3 p1 b3", {3, 5, 5, 5}, 6, DnnlConvGeo{3, 3, 1, 1, 1, 1, 1, 1},
                             {Arg("kernel", 3), Arg("pad", 1)}));
    out.push_back(EngineConv(e, "1x1 b2 (plain layout)", {2, 6, 4, 3}, 5, DnnlConvGeo{1, 1}, {}));
    out.push_back(EngineConv(e, "1x1 s2", {2, 4, 5, 5}, 3, DnnlConvGeo{1, 1, 2, 2}, {Arg("stride", 2)}));
    out.push_back(EngineConv(e, "k2x3 strides 2,1 pads t1 l0 b2 r1", {2, 2, 6, 7}, 3,
                             DnnlConvGeo{2, 3, 2, 1, 1, 0, 2, 1},
                             {Arg("kernel_h", 2), Arg("kernel_w", 3), Ints("strides", {2, 1}), Ints("pads", {1, 0, 2, 1})}));
    out.push_back(EngineConv(e, "dilation 2,1", {1, 3, 7, 7}, 4, DnnlConvGeo{3, 3, 1, 1, 2, 1, 2, 1, 2, 1},
                             {Arg("kernel", 3), Arg("pad_t", 2), Arg("pad_l", 1), Arg("pad_b", 2), Arg("pad_r", 1),
                              Ints("dilations", {2, 1})}));
    out.push_back(EngineConv(e, "group 2 b2", {2, 4, 5, 5}, 6, DnnlConvGeo{3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
                             {Arg("kernel", 3), Arg("pad", 1), Arg("group", 2)}));
    out.push_back(EngineConv(e, "depthwise group 4 s2", {1, 4, 6, 6}, 4, DnnlConvGeo{3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},
                             {Arg("kernel", 3), Arg("stride", 2), Arg("pad", 1), Arg("group", 4)}));
    out.push_back(EngineConv(e, "no bias", {2, 3, 4, 4}, 2, DnnlConvGeo{3, 3}, {Arg("kernel", 3)}, false));
    // legacy SAME, stride 2 on 5: target 3, pad_needed (3-1)*2+3-5 = 2 -> pads 1, 1.
    out.push_back(EngineConv(e, "legacy SAME s2", {1, 2, 5, 5}, 3, DnnlConvGeo{3, 3, 2, 2, 1, 1, 1, 1},
                             {Arg("kernel", 3), Arg("stride", 2), Arg("legacy_pad", 2)}));
    // legacy SAME, k3 stride 2 on 6: target 3, pad_needed (3-1)*2+3-6 = 1 -> pads 0 (head), 1 (tail).
    out.push_back(EngineConv(e, "legacy SAME s2 (asymmetric)", {1, 2, 6, 6}, 2, DnnlConvGeo{3, 3, 2, 2, 0, 0, 1, 1},
                             {Arg("kernel", 3), Arg("stride", 2), Arg("legacy_pad", 2)}));
  }
#ifdef HETNET_WITH_DNNL  // the default kernels' fused_activation cases are theirs
  // fused_activation on the DNNL engine: post-op (blocked layout) and the pass after the 1x1 GEMM path.
  out.push_back(EngineConv("DNNL", "k3 p1 b3", {3, 5, 5, 5}, 6, DnnlConvGeo{3, 3, 1, 1, 1, 1, 1, 1},
                           {Arg("kernel", 3), Arg("pad", 1)}, true, true));
  out.push_back(EngineConv("DNNL", "1x1 b2 (plain layout)", {2, 6, 4, 3}, 5, DnnlConvGeo{1, 1}, {}, true, true));
#endif
  return out;
}

HN_OP_CASES(FCEngines) {
  std::vector<Case> out;
  for (const char* e : {"PACKED", "DNNL", "EIGEN"})
    for (bool t : {false, true}) {
      out.push_back(EngineFC(e, t, 1, 7, 5));   // one row: DNNL (and PACKED through it) runs the Eigen GEMV
      out.push_back(EngineFC(e, t, 6, 13, 9));  // oneDNN inner product; PACKED: one tile, half a panel
      out.push_back(EngineFC(e, t, 33, 20, 17));
    }
  // PACKED's edges (device/cpu_packed_gemm.cc): K past one 832 block (partial sums through Y), rows
  // split 7 + 6 and over two row groups (49 = 48 + 1), a column tail past 32, a 16-column panel.
  for (bool t : {false, true}) {
    out.push_back(EngineFC("PACKED", t, 13, 900, 40));
    out.push_back(EngineFC("PACKED", t, 49, 3, 33));
    out.push_back(EngineFC("PACKED", t, 17, 11, 16, true));
    out.push_back(EngineFC("PACKED", t, 5, 1700, 7, true));  // fused Relu after the last of 3 K blocks only
  }
#ifdef HETNET_WITH_DNNL
  for (bool t : {false, true}) {
    out.push_back(EngineFC("DNNL", t, 1, 7, 5, true));  // the GEMV fallback, which applies the Relu itself
    out.push_back(EngineFC("DNNL", t, 6, 13, 9, true));  // eltwise_relu post-op
  }
#endif
  return out;
}

}  // namespace harness
}  // namespace hetnet
