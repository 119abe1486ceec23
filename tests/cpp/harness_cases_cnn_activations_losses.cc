// Harness cases: LeakyRelu, PRelu, Clip, LabelCrossEntropy, CrossEntropy, AveragedLoss, Accuracy.
// References are naive float64 loops from Caffe2's definitions.
#include <algorithm>
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

double ArgF(const caffe2::OperatorDef& def, const std::string& name, double dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.has_f() ? a.f() : static_cast<double>(a.i());
  return dflt;
}
std::string ArgS(const caffe2::OperatorDef& def, const std::string& name, const std::string& dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return dflt;
}

RefTensors LeakyReluRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const double alpha = ArgF(def, "alpha", 0.01);
  RefTensor y(in[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) y[i] = in[0][i] > 0 ? in[0][i] : alpha * in[0][i];
  return {y};
}

RefTensors PReluRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &W = in[1];
  const bool nchw = ArgS(def, "order", "NCHW") == "NCHW";
  const int64_t C = nchw ? X.dim(1) : X.dim(-1);
  int64_t inner = 1;
  if (nchw)
    for (size_t d = 2; d < X.shape.size(); ++d) inner *= X.shape[d];
  RefTensor y(X.shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double s = W.numel() == 1 ? W[0] : W[(i / inner) % C];
    y[i] = X[i] > 0 ? X[i] : s * X[i];
  }
  return {y};
}

RefTensors ClipRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const double lo = ArgF(def, "min", -1e300), hi = ArgF(def, "max", 1e300);
  RefTensor y(in[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) y[i] = std::min(std::max(in[0][i], lo), hi);
  return {y};
}

RefTensors LabelXentRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t N = in[0].shape.size() > 1 ? in[0].dim(0) : 1, D = in[0].numel() / std::max<int64_t>(N, 1);
  RefTensor y({N});
  for (int64_t i = 0; i < N; ++i) y[i] = -std::log(std::max(in[0][i * D + static_cast<int64_t>(in[1][i])], 1e-20));
  return {y};
}

RefTensors XentRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t N = in[0].dim(0), D = in[0].numel() / N;
  RefTensor y({N});
  for (int64_t i = 0; i < N * D; ++i) y[i / D] -= in[1][i] * std::log(std::max(in[0][i], 1e-20));
  return {y};
}

RefTensors AveragedLossRef(const caffe2::OperatorDef&, const RefTensors& in) {
  double s = 0;
  for (double v : in[0].data) s += v;
  return {RefTensor({}, {in[0].numel() > 0 ? s / in[0].numel() : 0.0})};
}

RefTensors AccuracyRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const int64_t top_k = static_cast<int64_t>(ArgF(def, "top_k", 1));
  const int64_t N = in[0].dim(0), D = in[0].dim(1);
  int64_t correct = 0;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t l = static_cast<int64_t>(in[1][i]);
    int64_t above = 0;  // entries ranked above the label: greater, or equal with a smaller index
    for (int64_t j = 0; j < D; ++j)
      if (in[0][i * D + j] > in[0][i * D + l] || (in[0][i * D + j] == in[0][i * D + l] && j < l)) ++above;
    if (above < top_k) ++correct;
  }
  return {RefTensor({}, {N > 0 ? static_cast<double>(correct) / N : 0.0})};
}

}  // namespace

HN_OP_CASES(CnnActivationsLosses) {
  const DataType i32 = DataType::Int32;
  std::vector<Case> c = {
      Case("default alpha").Def(Op("LeakyRelu", {"X"}, {"Y"})).Inputs({In({3, 4}).Distinct()}).Ref(LeakyReluRef),
      Case("alpha 0.3").Def(Op("LeakyRelu", {"X"}, {"Y"}, {Arg("alpha", 0.3f)})).Inputs({In({2, 3, 5}).Distinct()})
          .Ref(LeakyReluRef),
      Case("empty").Def(Op("LeakyRelu", {"X"}, {"Y"})).Inputs({In({0, 3})}).Ref(LeakyReluRef),
      Case("NCHW per channel").Def(Op("PRelu", {"X", "W"}, {"Y"})).Inputs({In({2, 3, 4}).Distinct(), In({3})})
          .Ref(PReluRef),
      Case("NHWC per channel").Def(Op("PRelu", {"X", "W"}, {"Y"}, {Arg("order", "NHWC")}))
          .Inputs({In({2, 4, 3}).Distinct(), In({3})}).Ref(PReluRef),
      Case("shared slope").Def(Op("PRelu", {"X", "W"}, {"Y"})).Inputs({In({4, 5}).Distinct(), In({1})}).Ref(PReluRef),
      Case("[-0.5, 0.5]").Def(Op("Clip", {"X"}, {"Y"}, {Arg("min", -0.5f), Arg("max", 0.5f)}))
          .Inputs({In({3, 4}).Distinct()}).Ref(ClipRef),
      Case("min only").Def(Op("Clip", {"X"}, {"Y"}, {Arg("min", 0.f)})).Inputs({In({4, 4}).Distinct()}).Ref(ClipRef),
      Case("5x4").Def(Op("LabelCrossEntropy", {"X", "label"}, {"Y"}))
          .Inputs({In({5, 4}).Range(0.1, 1), In({5}, i32).Range(0, 3).NoGrad()}).Ref(LabelXentRef).GradTol(1e-2, 1e-3),
      Case("[N, 1] labels").Def(Op("LabelCrossEntropy", {"X", "label"}, {"Y"}))
          .Inputs({In({3, 7}).Range(0.1, 1), In({3, 1}, i32).Range(0, 6).NoGrad()}).Ref(LabelXentRef)
          .GradTol(1e-2, 1e-3),
      Case("soft labels").Def(Op("CrossEntropy", {"X", "label"}, {"Y"}))
          .Inputs({In({4, 6}).Range(0.1, 1), In({4, 6}).Range(0, 1).NoGrad()}).Ref(XentRef).GradTol(1e-2, 1e-3),
      Case("3x5").Def(Op("AveragedLoss", {"X"}, {"Y"})).Inputs({In({3, 5})}).Ref(AveragedLossRef),
      Case("top 1").Def(Op("Accuracy", {"P", "label"}, {"acc"}))
          .Inputs({In({6, 5}).Distinct(), In({6}, i32).Range(0, 4)}).Ref(AccuracyRef).NoGrad(),
      Case("top 3").Def(Op("Accuracy", {"P", "label"}, {"acc"}, {Arg("top_k", 3)}))
          .Inputs({In({8, 5}).Distinct(), In({8}, i32).Range(0, 4)}).Ref(AccuracyRef).NoGrad(),
      Case("ties").Def(Op("Accuracy", {"P", "label"}, {"acc"}, {Arg("top_k", 2)}))
          .Inputs({In({3, 3}).Values({0.5, 0.5, 0, 0.2, 0.2, 0.2, 0, 1, 1}), In({3}, i32).Values({1, 2, 2})})
          .Ref(AccuracyRef).NoGrad(),
  };
  return c;
}

}  // namespace harness
}  // namespace hetnet
