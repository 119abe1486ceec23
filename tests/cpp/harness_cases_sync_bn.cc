// Harness cases for synchronized batch norm: ChannelStats, ChannelBackpropStats (both orders, 2-D to
// 5-D), SpatialBN / SpatialBNGradient in order NHWC (gradient-checked) and in the multi-batch forms
// (inputs 5, 6 = combined sums, num_batches; input 7 = count). References are float64 loops over
// (n, c, k) written from Caffe2's formulas (spec distributed-facts.md 4.2), not from the kernels.
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {

namespace {
// X as [N, C, HW] in `order`: offset of (n, c, k).
struct Geom {
  int64_t N, C, HW;
  bool nhwc;
  int64_t At(int64_t n, int64_t c, int64_t k) const { return nhwc ? (n * HW + k) * C + c : (n * C + c) * HW + k; }
};
Geom GeomOf(const RefTensor& X, const std::string& order) {
  const int nd = static_cast<int>(X.shape.size());
  Geom g{X.dim(0), order == "NHWC" ? X.dim(-1) : X.dim(1), 1, order == "NHWC"};
  for (int i = 1; i < nd; ++i)
    if (i != (g.nhwc ? nd - 1 : 1)) g.HW *= X.shape[i];
  return g;
}
std::vector<int64_t> Shape(std::vector<int64_t> nchw, const std::string& order) {
  if (order == "NHWC") nchw.push_back(nchw[1]), nchw.erase(nchw.begin() + 1);
  return nchw;
}
// Sum over channel c of f(offset).
template <class F>
double ChannelSum(const Geom& g, int64_t c, F f) {
  double s = 0;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t k = 0; k < g.HW; ++k) s += f(g.At(n, c, k));
  return s;
}

RefFn ChannelStatsRef(const std::string& order, DataType dtype) {
  return [=](const caffe2::OperatorDef& def, const RefTensors& in) {
    const Geom g = GeomOf(in[0], order);
    RefTensor s({g.C}, dtype), q({g.C}, dtype), m({1}, dtype);
    for (int64_t c = 0; c < g.C; ++c) {
      s[c] = ChannelSum(g, c, [&](int64_t i) { return in[0][i]; });
      q[c] = ChannelSum(g, c, [&](int64_t i) { return in[0][i] * in[0][i]; });
    }
    m[0] = ChannelSum(g, 0, [](int64_t) { return 1.0; });  // the count output: elements per channel
    if (def.output_size() > 2) return RefTensors{s, q, m};
    return RefTensors{s, q};
  };
}

RefFn ChannelBackpropStatsRef(const std::string& order) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const Geom g = GeomOf(in[0], order);
    RefTensor ds({g.C}), db({g.C});
    for (int64_t c = 0; c < g.C; ++c) {
      ds[c] = ChannelSum(g, c, [&](int64_t i) { return in[3][i] * (in[0][i] - in[1][c]) * in[2][c]; });
      db[c] = ChannelSum(g, c, [&](int64_t i) { return in[3][i]; });
    }
    return RefTensors{ds, db};
  };
}

// SpatialBN training. sums: statistics from inputs 5, 6 with M = count (input 7) or
// num_batches * N * HW; else from X itself.
RefFn SpatialBNRef(const std::string& order, bool is_test, double eps, double momentum, int num_batches = 1) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor& X = in[0];
    const Geom g = GeomOf(X, order);
    RefTensor Y(X.shape), rm({g.C}), rv({g.C}), sm({g.C}), si({g.C});
    for (int64_t c = 0; c < g.C; ++c) {
      double mean = in[3][c], var = in[4][c];
      if (!is_test) {
        double S, Q, M;
        if (in.size() >= 7) {
          S = in[5][c], Q = in[6][c];
          M = in.size() == 8 ? in[7][0] : double(num_batches) * g.N * g.HW;
        } else {
          S = ChannelSum(g, c, [&](int64_t i) { return X[i]; });
          Q = ChannelSum(g, c, [&](int64_t i) { return X[i] * X[i]; });
          M = double(g.N * g.HW);
        }
        mean = S / M;
        var = Q / M - mean * mean;
        rm[c] = momentum * in[3][c] + (1 - momentum) * mean;
        rv[c] = momentum * in[4][c] + (1 - momentum) * var;
        sm[c] = mean;
        si[c] = 1 / std::sqrt(var + eps);
      }
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t k = 0; k < g.HW; ++k) {
          const int64_t i = g.At(n, c, k);
          Y[i] = (X[i] - mean) / std::sqrt(var + eps) * in[1][c] + in[2][c];
        }
    }
    if (is_test) return RefTensors{Y};
    return RefTensors{Y, rm, rv, sm, si};
  };
}

// Multi-batch SpatialBNGradient(X, scale, dY, mean, rstd, G, B[, count]): Caffe2's fused form
// dX = alpha dY + beta X + gamma with dscale = G / n, dbias = B / n; M = count or n * N * HW.
RefFn MultiBatchGradRef(const std::string& order, int num_batches) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor& X = in[0];
    const Geom g = GeomOf(X, order);
    const double M = in.size() == 8 ? in[7][0] : double(num_batches) * g.N * g.HW;
    RefTensor dX(X.shape), ds({g.C}), db({g.C});
    for (int64_t c = 0; c < g.C; ++c) {
      const double scale = in[1][c], mean = in[3][c], rstd = in[4][c], G = in[5][c], B = in[6][c];
      ds[c] = G / num_batches;
      db[c] = B / num_batches;
      const double alpha = scale * rstd, beta = -alpha * G * rstd / M, gamma = alpha * (mean * G * rstd - B) / M;
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t k = 0; k < g.HW; ++k) {
          const int64_t i = g.At(n, c, k);
          dX[i] = alpha * in[2][i] + beta * X[i] + gamma;
        }
    }
    return RefTensors{dX, ds, db};
  };
}

std::vector<InputSpec> BNInputs(const std::vector<int64_t>& x, int64_t C) {
  return {In(x).Range(-2, 2), In({C}).Range(0.5, 1.5), In({C}), In({C}).Range(-0.5, 0.5).NoGrad(),
          In({C}).Range(0.5, 1.5).NoGrad()};
}
}  // namespace

HN_OP_CASES(SyncBatchNorm) {
  std::vector<Case> cs;
  const std::vector<std::vector<int64_t>> shapes{{5, 3}, {2, 3, 4}, {2, 3, 3, 2}, {2, 3, 2, 2, 2}};
  for (const std::string order : {"NCHW", "NHWC"})
    for (const auto& nchw : shapes) {
      const auto x = Shape(nchw, order);
      const std::string label = order + " " + std::to_string(x.size()) + "-D";
      for (DataType t : {DataType::Float, DataType::Double})
        cs.push_back(Case(label + (t == DataType::Double ? " double" : ""))
                         .Def(Op("ChannelStats", {"X"}, {"sum", "sumsq"},
                                 {Arg("order", order), Arg("dtype", t == DataType::Double ? "double" : "float")}))
                         .Inputs({In(x).Range(-3, 3)})
                         .Ref(ChannelStatsRef(order, t))
                         .Tol(Tolerance{1e-5, 1e-9, 1e-2, 1e-2, 1e-5})
                         .NoGrad());
      cs.push_back(Case(label + " with count")
                       .Def(Op("ChannelStats", {"X"}, {"sum", "sumsq", "count"}, {Arg("order", order)}))
                       .Inputs({In(x).Range(-3, 3)})
                       .Ref(ChannelStatsRef(order, DataType::Float))
                       .Tol(Tolerance{1e-5, 1e-9, 1e-2, 1e-2, 1e-5})
                       .NoGrad());
      cs.push_back(Case(label)
                       .Def(Op("ChannelBackpropStats", {"X", "mean", "rstd", "dY"}, {"dscale", "dbias"},
                               {Arg("order", order)}))
                       .Inputs({In(x), In({3}).Range(-0.5, 0.5), In({3}).Range(0.5, 2), In(x)})
                       .Ref(ChannelBackpropStatsRef(order))
                       .NoGrad());
    }
  const std::vector<std::string> bn_in{"X", "scale", "bias", "rm", "rv"};
  const std::vector<std::string> bn_out{"Y", "rm", "rv", "saved_mean", "saved_inv_std"};
  for (const auto& nchw : {std::vector<int64_t>{3, 4, 3}, std::vector<int64_t>{2, 2, 3, 2, 2}}) {
    const auto x = Shape(nchw, "NHWC");
    const std::string label = "NHWC " + std::to_string(x.size()) + "-D";
    cs.push_back(Case(label + " training")
                     .Def(Op("SpatialBN", bn_in, bn_out, {Arg("order", "NHWC"), Arg("epsilon", 1e-4f), Arg("momentum", 0.8f)}))
                     .Inputs(BNInputs(x, nchw[1]))
                     .Ref(SpatialBNRef("NHWC", false, 1e-4, 0.8))
                     .GradTol(2e-2, 1e-2));
    cs.push_back(Case(label + " is_test")
                     .Def(Op("SpatialBN", bn_in, {"Y"}, {Arg("order", "NHWC"), Arg("is_test", 1)}))
                     .Inputs(BNInputs(x, nchw[1]))
                     .Ref(SpatialBNRef("NHWC", true, 1e-5, 0.9)));
  }
  // Multi-batch forward: X [2, 3, 2, 2] of 2 batches (M = 16); S in [-4, 4] and Q in [16, 32] keep
  // mean^2 < Q / M. The gradient of this form needs the summed parameter gradients (NoGrad here).
  for (const std::string order : {"NCHW", "NHWC"}) {
    const auto x = Shape({2, 3, 2, 2}, order);
    std::vector<InputSpec> in = BNInputs(x, 3);
    in.push_back(In({3}).Range(-4, 4).NoGrad());
    in.push_back(In({3}).Range(16, 32).NoGrad());
    std::vector<std::string> names = bn_in;
    names.push_back("sums");
    names.push_back("sumsq");
    const caffe2::Argument order_arg = Arg("order", order);
    cs.push_back(Case(order + " num_batches 2")
                     .Def(Op("SpatialBN", names, bn_out, {order_arg, Arg("num_batches", 2)}))
                     .Inputs(in)
                     .Ref(SpatialBNRef(order, false, 1e-5, 0.9, 2))
                     .NoGrad());
    std::vector<InputSpec> in_f64 = in;
    in_f64[5].Type(DataType::Double);
    in_f64[6].Type(DataType::Double);
    in_f64.push_back(In({1}, DataType::Int64).Values({20}).NoGrad());
    names.push_back("count");
    cs.push_back(Case(order + " float64 sums, int64 count")
                     .Def(Op("SpatialBN", names, bn_out, {order_arg, Arg("num_batches", 2)}))
                     .Inputs(in_f64)
                     .Ref(SpatialBNRef(order, false, 1e-5, 0.9, 2))
                     .NoGrad());
    // Gradient, multi-batch: X, scale, dY, mean, rstd, G, B (+ count).
    std::vector<InputSpec> gin{In(x), In({3}).Range(0.5, 1.5), In(x), In({3}).Range(-0.5, 0.5),
                               In({3}).Range(0.5, 2), In({3}).Range(-3, 3), In({3}).Range(-3, 3)};
    const std::vector<std::string> gnames{"X", "scale", "dY", "mean", "rstd", "G", "B"};
    cs.push_back(Case(order + " num_batches 3")
                     .Def(Op("SpatialBNGradient", gnames, {"dX", "dscale", "dbias"}, {order_arg, Arg("num_batches", 3)}))
                     .Inputs(gin)
                     .Ref(MultiBatchGradRef(order, 3))
                     .NoGrad());
    gin.push_back(In({1}, DataType::Double).Values({21}).NoGrad());
    std::vector<std::string> gnames8 = gnames;
    gnames8.push_back("count");
    cs.push_back(Case(order + " count")
                     .Def(Op("SpatialBNGradient", gnames8, {"dX", "dscale", "dbias"}, {order_arg, Arg("num_batches", 2)}))
                     .Inputs(gin)
                     .Ref(MultiBatchGradRef(order, 2))
                     .NoGrad());
  }
  return cs;
}

}  // namespace harness
}  // namespace hetnet
