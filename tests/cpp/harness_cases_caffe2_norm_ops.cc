// Harness cases for the Caffe2 operators of issue 13 added with the normalization group: TopK,
// InstanceNorm, GroupNorm, EnsureCPUOutput (Print has no outputs: test_ops_caffe2_norm.cc). References
// are naive float64 loops written from Caffe2's operator docs, not from the kernels.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

const DataType i64 = DataType::Int64;

int64_t IntArgOr(const caffe2::OperatorDef& def, const char* name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}

// TopK: each column along the axis sorted by (value descending, index ascending), padded past n.
RefTensors TopKRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const int nd = static_cast<int>(X.shape.size());
  int64_t axis = IntArgOr(def, "axis", -1);
  if (axis < 0) axis += nd;
  const int64_t k = in.size() > 1 ? static_cast<int64_t>(in[1][0]) : IntArgOr(def, "k", -1);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= X.shape[d];
  for (int64_t d = axis + 1; d < nd; ++d) inner *= X.shape[d];
  const int64_t n = X.shape[axis];
  std::vector<int64_t> shape = X.shape;
  shape[axis] = k;
  RefTensor v(shape), idx(shape, i64), flat({outer * k * inner}, i64);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      auto at = [&](int64_t t) { return X[(o * n + t) * inner + j]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return at(a) > at(b); });
      for (int64_t r = 0; r < k; ++r) {
        const int64_t q = (o * k + r) * inner + j;
        v[q] = r < n ? at(order[r]) : 0.0;
        idx[q] = r < n ? order[r] : -1;
        flat[q] = r < n ? (o * n + order[r]) * inner + j : -1;
      }
    }
  RefTensors out{v, idx};
  if (def.output_size() > 2) out.push_back(flat);
  return out;
}

std::vector<Case> TopKCases() {
  return {
      Case("k 3 last axis").Def(Op("TopK", {"X"}, {"V", "I"}, {Arg("k", 3)})).Inputs({In({4, 7}).Distinct()})
          .Ref(TopKRef),
      Case("k 2 axis 1 of 3-D, flattened indices")
          .Def(Op("TopK", {"X"}, {"V", "I", "F"}, {Arg("k", 2), Arg("axis", 1)}))
          .Inputs({In({2, 5, 3}).Distinct()})
          .Ref(TopKRef),
      Case("ties: lower index first")
          .Def(Op("TopK", {"X"}, {"V", "I", "F"}, {Arg("k", 4)}))
          .Inputs({In({2, 6}).Values({0.5, 1, 0.5, 1, -2, 1, 3, 3, 3, -1, -1, 3}).NoGrad()})
          .Ref(TopKRef),
      Case("k 6 > dim 4 pads with 0 and -1")
          .Def(Op("TopK", {"X"}, {"V", "I", "F"}, {Arg("k", 6), Arg("axis", 0)}))
          .Inputs({In({4, 2}).Distinct()})
          .Ref(TopKRef),
      Case("k from an int64 input")
          .Def(Op("TopK", {"X", "K"}, {"V", "I"}))
          .Inputs({In({3, 5}).Distinct(), In({1}, i64).Values({2})})
          .Ref(TopKRef)
          .NoShapeCheck(),
  };
}

double FloatArgOr(const caffe2::OperatorDef& def, const char* name, double dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.f();
  return dflt;
}
std::string StrArgOr(const caffe2::OperatorDef& def, const char* name, const std::string& dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return dflt;
}

// Group normalization of X (inputs X, gamma, beta) with `groups` groups; InstanceNorm is groups = C.
// Outputs Y, mean [N, G], 1/std [N, G].
RefTensors GroupedNormRef(const caffe2::OperatorDef& def, const RefTensors& in, int64_t groups) {
  const RefTensor& X = in[0];
  const bool nhwc = StrArgOr(def, "order", "NCHW") == "NHWC";
  const double eps = FloatArgOr(def, "epsilon", 1e-5);
  const int64_t n = X.shape[0], c = nhwc ? X.shape.back() : X.shape[1], s = X.numel() / (n * c);
  if (groups <= 0) groups = c;
  const int64_t d = c / groups;
  auto at = [&](int64_t b, int64_t ch, int64_t p) { return nhwc ? (b * s + p) * c + ch : (b * c + ch) * s + p; };
  RefTensor y(X.shape), mean({n, groups}), inv({n, groups});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      double mu = 0, var = 0;
      for (int64_t ch = g * d; ch < (g + 1) * d; ++ch)
        for (int64_t p = 0; p < s; ++p) mu += X[at(b, ch, p)] / (d * s);
      for (int64_t ch = g * d; ch < (g + 1) * d; ++ch)
        for (int64_t p = 0; p < s; ++p) var += std::pow(X[at(b, ch, p)] - mu, 2) / (d * s);
      mean[b * groups + g] = mu;
      inv[b * groups + g] = 1.0 / std::sqrt(var + eps);
      for (int64_t ch = g * d; ch < (g + 1) * d; ++ch)
        for (int64_t p = 0; p < s; ++p)
          y[at(b, ch, p)] = (X[at(b, ch, p)] - mu) * inv[b * groups + g] * in[1][ch] + in[2][ch];
    }
  return {y, mean, inv};
}

RefTensors InstanceNormRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  RefTensors all = GroupedNormRef(def, in, 0);
  all.resize(def.output_size());
  return all;
}
RefTensors GroupNormRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  return GroupedNormRef(def, in, IntArgOr(def, "group", IntArgOr(def, "num_groups", 32)));
}

std::vector<Case> InstanceNormCases() {
  return {
      Case("NCHW, Y only").Def(Op("InstanceNorm", {"X", "s", "b"}, {"Y"}))
          .Inputs({In({2, 3, 4, 5}), In({3}), In({3})}).Ref(InstanceNormRef),
      Case("NCHW, saved mean and inv_stdev, epsilon 1e-3")
          .Def(Op("InstanceNorm", {"X", "s", "b"}, {"Y", "mean", "inv"}, {Arg("epsilon", 1e-3)}))
          .Inputs({In({2, 3, 3, 2}), In({3}), In({3})}).Ref(InstanceNormRef),
      Case("NHWC 3-D")
          .Def(Op("InstanceNorm", {"X", "s", "b"}, {"Y", "mean", "inv"}, {Arg("order", "NHWC")}))
          .Inputs({In({2, 6, 4}), In({4}), In({4})}).Ref(InstanceNormRef),
  };
}

std::vector<Case> GroupNormCases() {
  return {
      Case("group 2 NCHW").Def(Op("GroupNorm", {"X", "g", "b"}, {"Y", "mean", "inv"}, {Arg("group", 2)}))
          .Inputs({In({2, 4, 3, 3}), In({4}), In({4})}).Ref(GroupNormRef),
      Case("num_groups 3, epsilon 1e-3, 5-D")
          .Def(Op("GroupNorm", {"X", "g", "b"}, {"Y", "mean", "inv"}, {Arg("num_groups", 3), Arg("epsilon", 1e-3)}))
          .Inputs({In({1, 6, 2, 2, 3}), In({6}), In({6})}).Ref(GroupNormRef),
      Case("group 2 NHWC").Def(Op("GroupNorm", {"X", "g", "b"}, {"Y", "mean", "inv"}, {Arg("group", 2),
                                                                                         Arg("order", "NHWC")}))
          .Inputs({In({2, 3, 3, 4}), In({4}), In({4})}).Ref(GroupNormRef),
      Case("group = C (instance-like)").Def(Op("GroupNorm", {"X", "g", "b"}, {"Y", "mean", "inv"}, {Arg("group", 3)}))
          .Inputs({In({2, 3, 5}), In({3}), In({3})}).Ref(GroupNormRef),
  };
}

// EnsureCPUOutput: the output equals the input (the GPU column checks the device-to-host copy).
std::vector<Case> EnsureCPUOutputCases() {
  auto identity = [](const caffe2::OperatorDef&, const RefTensors& in) { return RefTensors{in[0]}; };
  return {
      Case("float 3-D").Def(Op("EnsureCPUOutput", {"X"}, {"Y"})).Inputs({In({2, 3, 4}).NoGrad()}).Ref(identity)
          .NoGrad(),
      Case("int64").Def(Op("EnsureCPUOutput", {"X"}, {"Y"})).Inputs({In({5}, i64).Range(-9, 9)}).Ref(identity)
          .NoGrad(),
  };
}

}  // namespace

HN_OP_CASES(Caffe2NormOps) {
  std::vector<Case> all;
  for (auto&& group : {TopKCases(), InstanceNormCases(), GroupNormCases(), EnsureCPUOutputCases()})
    for (auto& c : group) all.push_back(c);
  return all;
}

}  // namespace harness
}  // namespace hetnet
