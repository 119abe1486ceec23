// Harness cases: ReduceMax, ReduceMin, ReduceProd, ReduceLogSumExp, and ReduceSum / ReduceMean with the
// axes as (CPU) input 1 and noop_with_empty_axes; NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss and
// GatherElements (CPU kernels). Naive float64 references.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

const caffe2::Argument* FindArg(const caffe2::OperatorDef& def, const std::string& name) {
  for (const auto& a : def.arg())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t ArgI(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  const auto* a = FindArg(def, name);
  return a ? a->i() : dflt;
}

// Reduction of in[0] over the axes of arg `axes` or of input 1 (ONNX semantics).
RefFn ReduceRef(const std::string& kind) {
  return [kind](const caffe2::OperatorDef& def, const RefTensors& in) {
    const auto& xs = in[0].shape;
    const int nd = static_cast<int>(xs.size());
    std::vector<int64_t> axes;
    if (in.size() > 1) {
      for (double a : in[1].data) axes.push_back(static_cast<int64_t>(a));
    } else if (const auto* a = FindArg(def, "axes")) {
      axes.assign(a->ints().begin(), a->ints().end());
    }
    std::vector<bool> red(nd, axes.empty() && !ArgI(def, "noop_with_empty_axes", 0));
    for (auto a : axes) red[a < 0 ? a + nd : a] = true;
    const bool keep = ArgI(def, "keepdims", 1);
    std::vector<int64_t> ys;
    for (int d = 0; d < nd; ++d)
      if (!red[d]) ys.push_back(xs[d]);
      else if (keep) ys.push_back(1);
    std::vector<std::vector<double>> groups;
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      int64_t rem = i, o = 0, mul = 1;
      for (int d = nd - 1; d >= 0; --d) {
        const int64_t c = rem % xs[d];
        rem /= xs[d];
        if (!red[d]) {
          o += c * mul;
          mul *= xs[d];
        }
      }
      if (o >= static_cast<int64_t>(groups.size())) groups.resize(o + 1);
      groups[o].push_back(in[0][i]);
    }
    RefTensor y(ys, in[0].dtype);
    groups.resize(y.numel());
    for (int64_t o = 0; o < y.numel(); ++o) {
      const auto& g = groups[o];
      double v = 0;
      if (kind == "max") v = *std::max_element(g.begin(), g.end());
      if (kind == "min") v = *std::min_element(g.begin(), g.end());
      if (kind == "prod") {
        v = 1;
        for (double e : g) v *= e;
      }
      if (kind == "sum" || kind == "mean" || kind == "lse") {
        for (double e : g) v += kind == "lse" ? std::exp(e) : e;
        if (kind == "mean") v /= static_cast<double>(g.size());
        if (kind == "lse") v = std::log(v);
      }
      y.data[o] = v;
    }
    return RefTensors{y};
  };
}

// ONNX NLL (of log_softmax(in[0]) along axis 1 when softmax) with optional weights in[2].
RefFn ClassLossRef(bool softmax) {
  return [softmax](const caffe2::OperatorDef& def, const RefTensors& in) {
    const int64_t N = in[0].shape[0], C = in[0].shape[1], D = in[0].numel() / (N * C);
    RefTensor lp(in[0].shape, in[0].data, in[0].dtype);
    if (softmax)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < D; ++d) {
          double s = 0;
          for (int64_t c = 0; c < C; ++c) s += std::exp(in[0][(n * C + c) * D + d]);
          for (int64_t c = 0; c < C; ++c) lp.data[(n * C + c) * D + d] = in[0][(n * C + c) * D + d] - std::log(s);
        }
    const auto* ii = FindArg(def, "ignore_index");
    const std::string reduction = FindArg(def, "reduction") ? FindArg(def, "reduction")->s() : "mean";
    RefTensor loss(in[1].shape, in[0].dtype);
    double total = 0, total_w = 0;
    for (int64_t i = 0; i < N * D; ++i) {
      const int64_t t = static_cast<int64_t>(in[1][i]);
      if (ii && t == ii->i()) continue;
      const double w = in.size() > 2 ? in[2][t] : 1.0;
      loss.data[i] = -lp[(i / D * C + t) * D + i % D] * w;
      total += loss.data[i];
      total_w += w;
    }
    if (reduction != "none") loss = RefTensor({}, {reduction == "sum" ? total : total / total_w}, in[0].dtype);
    RefTensors out{loss};
    if (def.output_size() > 1) out.push_back(lp);
    return out;
  };
}

// ONNX GatherElements of in[0] by in[1] along arg axis.
RefTensors GatherElementsRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const auto& xs = in[0].shape;
  const int nd = static_cast<int>(xs.size());
  int64_t axis = ArgI(def, "axis", 0);
  if (axis < 0) axis += nd;
  RefTensor y(in[1].shape, in[0].dtype);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t rem = o, off = 0, stride = 1;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t c = rem % in[1].shape[d];
      rem /= in[1].shape[d];
      int64_t k = static_cast<int64_t>(in[1][o]);
      if (k < 0) k += xs[d];
      off += (d == axis ? k : c) * stride;
      stride *= xs[d];
    }
    y.data[o] = in[0][off];
  }
  return {y};
}

HN_OP_CASES(ReduceKinds) {
  const DataType i64 = DataType::Int64;
  const DataType f64 = DataType::Double;
  auto axes = [&](std::vector<double> v) { return In({static_cast<int64_t>(v.size())}, i64).Values(std::move(v)); };
  std::vector<Case> c{
      Case("axis 1, keepdims 0").Def(Op("ReduceMax", {"X"}, {"Y"}, {Ints("axes", {1}), Arg("keepdims", 0)}))
          .Inputs({In({3, 4, 2}).Distinct()}).Ref(ReduceRef("max")).NoGrad(),
      Case("all, int32").Def(Op("ReduceMax", {"X"}, {"Y"})).Inputs({In({3, 4}, DataType::Int32).Range(-9, 9)})
          .Ref(ReduceRef("max")).NoGrad(),
      Case("axes input 0 -1").Def(Op("ReduceMin", {"X", "A"}, {"Y"})).Inputs({In({3, 4, 2}).Distinct(), axes({0, -1})})
          .Ref(ReduceRef("min")).NoGrad(),
      Case("axes 0 2, keepdims 0").Def(Op("ReduceProd", {"X"}, {"Y"}, {Ints("axes", {0, 2}), Arg("keepdims", 0)}))
          .Inputs({In({2, 3, 3}).Range(0.5, 1.5)}).Ref(ReduceRef("prod")).NoGrad(),
      Case("axes input 1, float64").Def(Op("ReduceLogSumExp", {"X", "A"}, {"Y"}))
          .Inputs({In({2, 5, 3}, f64).Range(-3, 3), axes({1})}).Ref(ReduceRef("lse")).NoGrad(),
      Case("all").Def(Op("ReduceLogSumExp", {"X"}, {"Y"}, {Arg("keepdims", 0)})).Inputs({In({4, 3}).Range(-3, 3)})
          .Ref(ReduceRef("lse")).NoGrad(),
      Case("axes input 2 0, keepdims 0").Def(Op("ReduceSum", {"X", "A"}, {"Y"}, {Arg("keepdims", 0)}))
          .Inputs({In({2, 3, 4}), axes({2, 0})}).Ref(ReduceRef("sum")),
      Case("axes input empty, noop").Def(Op("ReduceMean", {"X", "A"}, {"Y"}, {Arg("noop_with_empty_axes", 1)}))
          .Inputs({In({2, 3}), In({0}, i64)}).Ref(ReduceRef("mean")),
      Case("axes input -1").Def(Op("ReduceMean", {"X", "A"}, {"Y"})).Inputs({In({3, 5}), axes({-1})})
          .Ref(ReduceRef("mean")),
      Case("N C d, weight, mean, ignore 1")
          .Def(Op("NegativeLogLikelihoodLoss", {"X", "T", "W"}, {"L"}, {Arg("ignore_index", 1)}))
          .Inputs({In({3, 4, 2}).Range(-3, 0), In({3, 2}, i64).Range(0, 3), In({4}).Range(0.5, 1.5)})
          .Ref(ClassLossRef(false)).NoGrad().CpuOnly(),
      Case("N C, sum").Def(Op("NegativeLogLikelihoodLoss", {"X", "T"}, {"L"}, {Arg("reduction", "sum")}))
          .Inputs({In({5, 3}).Range(-3, 0), In({5}, DataType::Int32).Range(0, 2)}).Ref(ClassLossRef(false)).NoGrad()
          .CpuOnly(),
      Case("N C d1 d2, none, log_prob").Def(Op("SoftmaxCrossEntropyLoss", {"X", "T"}, {"L", "P"},
                                                {Arg("reduction", "none")}))
          .Inputs({In({2, 3, 2, 2}).Range(-2, 2), In({2, 2, 2}, i64).Range(0, 2)}).Ref(ClassLossRef(true)).NoGrad()
          .CpuOnly(),
      Case("N C, weight, mean, float64").Def(Op("SoftmaxCrossEntropyLoss", {"X", "T", "W"}, {"L"}))
          .Inputs({In({4, 3}, f64).Range(-2, 2), In({4}, i64).Range(0, 2), In({3}, f64).Range(0.5, 1.5)})
          .Ref(ClassLossRef(true)).NoGrad().CpuOnly(),
      Case("axis 1, negative indices").Def(Op("GatherElements", {"X", "I"}, {"Y"}, {Arg("axis", 1)}))
          .Inputs({In({3, 4, 2}), In({3, 5, 2}, i64).Range(-4, 3)}).Ref(GatherElementsRef).NoGrad().CpuOnly(),
      Case("axis -1, float64").Def(Op("GatherElements", {"X", "I"}, {"Y"}, {Arg("axis", -1)}))
          .Inputs({In({2, 3}, f64), In({2, 2}, DataType::Int32).Range(0, 2)}).Ref(GatherElementsRef).NoGrad()
          .CpuOnly(),
  };
  return c;
}

}  // namespace
}  // namespace harness
}  // namespace hetnet
