// Harness cases for the runtime's first operators: FC, activations, Softmax(+WithLoss), elementwise
// binaries (with Caffe2's legacy broadcast), Sum, Scale, Reshape, Flatten. References are naive
// float64 loops written from Caffe2's definitions.
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

RefTensors FCRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const RefTensor &X = in[0], &W = in[1], &b = in[2];
  const int64_t M = X.dim(0), K = X.numel() / M, N = W.dim(0);
  RefTensor Y({M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b[n];
      for (int64_t k = 0; k < K; ++k) s += X[m * K + k] * W[n * K + k];
      Y[m * N + n] = s;
    }
  return {Y};
}

template <typename F>
RefFn Unary(F f) {
  return [f](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.numel(); ++i) y[i] = f(in[0][i]);
    return RefTensors{y};
  };
}

RefTensor SoftmaxRows(const RefTensor& x, int64_t N) {
  RefTensor p(x.shape);
  const int64_t D = x.numel() / N;
  for (int64_t i = 0; i < N; ++i) {
    double mx = -1e300, s = 0;
    for (int64_t j = 0; j < D; ++j) mx = std::max(mx, x[i * D + j]);
    for (int64_t j = 0; j < D; ++j) s += std::exp(x[i * D + j] - mx);
    for (int64_t j = 0; j < D; ++j) p[i * D + j] = std::exp(x[i * D + j] - mx) / s;
  }
  return p;
}

RefTensors SoftmaxWithLossRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t N = in[0].dim(0), D = in[0].numel() / N;
  RefTensor P = SoftmaxRows(in[0], N);
  double sum = 0, tw = 0;
  for (int64_t i = 0; i < N; ++i) {
    const double w = in.size() > 2 ? in[2][i] : 1.0;
    sum += -std::log(P[i * D + static_cast<int64_t>(in[1][i])]) * w;
    tw += w;
  }
  return {P, RefTensor({}, {sum / tw})};
}

// Caffe2 legacy broadcast: B matches a contiguous run of A's dims starting at `axis` (default: the
// trailing dims).
template <typename F>
RefFn Binary(F f) {
  return [f](const caffe2::OperatorDef& def, const RefTensors& in) {
    const RefTensor &A = in[0], &B = in[1];
    int axis = -1;
    for (const auto& a : def.arg())
      if (a.name() == "axis") axis = static_cast<int>(a.i());
    if (axis < 0) axis = static_cast<int>(A.shape.size() - B.shape.size());
    int64_t n = B.numel(), post = 1;
    for (size_t d = axis + B.shape.size(); d < A.shape.size(); ++d) post *= A.shape[d];
    RefTensor C(A.shape);
    for (int64_t i = 0; i < C.numel(); ++i) C[i] = f(A[i], B[(i / post) % n]);
    return RefTensors{C};
  };
}

RefFn Identity(std::vector<int64_t> shape) {
  return [shape](const caffe2::OperatorDef&, const RefTensors& in) {
    return RefTensors{RefTensor(shape, in[0].data)};
  };
}

}  // namespace

HN_OP_CASES(CoreOps) {
  auto add = [](double a, double b) { return a + b; };
  auto sub = [](double a, double b) { return a - b; };
  auto mul = [](double a, double b) { return a * b; };
  auto div = [](double a, double b) { return a / b; };
  std::vector<Case> c = {
      Case("4x6 -> 3").Def(Op("FC", {"X", "W", "b"}, {"Y"})).Inputs({In({4, 6}), In({3, 6}), In({3})}).Ref(FCRef),
      Case("axis 1 on 4-d X").Def(Op("FC", {"X", "W", "b"}, {"Y"})).Inputs({In({2, 2, 2, 3}), In({5, 12}), In({5})}).Ref(FCRef),
      Case("relu").Def(Op("Relu", {"X"}, {"Y"})).Inputs({In({3, 7}).Distinct()})
          .Ref(Unary([](double x) { return x > 0 ? x : 0; })).GradTol(1e-2, 1e-3),
      Case("sigmoid").Def(Op("Sigmoid", {"X"}, {"Y"})).Inputs({In({3, 7}).Range(-4, 4)})
          .Ref(Unary([](double x) { return 1 / (1 + std::exp(-x)); })),
      Case("tanh").Def(Op("Tanh", {"X"}, {"Y"})).Inputs({In({3, 7}).Range(-3, 3)})
          .Ref(Unary([](double x) { return std::tanh(x); })),
      Case("rows of 10").Def(Op("Softmax", {"X"}, {"Y"})).Inputs({In({4, 10}).Range(-3, 3)})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) { return RefTensors{SoftmaxRows(in[0], 4)}; }),
      Case("axis 2").Def(Op("Softmax", {"X"}, {"Y"}, {Arg("axis", 2)})).Inputs({In({2, 3, 5}).Range(-3, 3)})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) { return RefTensors{SoftmaxRows(in[0], 6)}; }),
      Case("int labels").Def(Op("SoftmaxWithLoss", {"X", "label"}, {"P", "loss"}))
          .Inputs({In({5, 4}).Range(-2, 2), In({5}, DataType::Int32).Range(0, 3).NoGrad()})
          .Ref(SoftmaxWithLossRef).GradOutputs({1}),
      Case("weighted").Def(Op("SoftmaxWithLoss", {"X", "label", "w"}, {"P", "loss"}))
          .Inputs({In({5, 4}).Range(-2, 2), In({5}, DataType::Int32).Range(0, 3).NoGrad(), In({5}).Range(0.5, 2).NoGrad()})
          .Ref(SoftmaxWithLossRef).GradOutputs({1}),
      Case("same shape").Def(Op("Add", {"A", "B"}, {"C"})).Inputs({In({3, 4}), In({3, 4})}).Ref(Binary(add)),
      Case("broadcast trailing").Def(Op("Add", {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
          .Inputs({In({2, 3, 4}), In({4})}).Ref(Binary(add)),
      Case("broadcast axis 1").Def(Op("Sub", {"A", "B"}, {"C"}, {Arg("broadcast", 1), Arg("axis", 1)}))
          .Inputs({In({2, 3, 4}), In({3})}).Ref(Binary(sub)),
      Case("same shape").Def(Op("Sub", {"A", "B"}, {"C"})).Inputs({In({3, 4}), In({3, 4})}).Ref(Binary(sub)),
      Case("same shape").Def(Op("Mul", {"A", "B"}, {"C"})).Inputs({In({3, 4}), In({3, 4})}).Ref(Binary(mul)),
      Case("broadcast trailing").Def(Op("Mul", {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
          .Inputs({In({2, 3, 4}), In({3, 4})}).Ref(Binary(mul)),
      Case("same shape").Def(Op("Div", {"A", "B"}, {"C"})).Inputs({In({3, 4}), In({3, 4}).Range(0.5, 2)}).Ref(Binary(div)),
      Case("broadcast trailing").Def(Op("Div", {"A", "B"}, {"C"}, {Arg("broadcast", 1)}))
          .Inputs({In({2, 3, 4}), In({4}).Range(0.5, 2)}).Ref(Binary(div)),
      Case("three inputs").Def(Op("Sum", {"A", "B", "C"}, {"S"})).Inputs({In({3, 5}), In({3, 5}), In({3, 5})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor s(in[0].shape);
            for (int64_t i = 0; i < s.numel(); ++i) s[i] = in[0][i] + in[1][i] + in[2][i];
            return RefTensors{s};
          }),
      Case("scale 2.5").Def(Op("Scale", {"X"}, {"Y"}, {Arg("scale", 2.5f)})).Inputs({In({4, 3})})
          .Ref(Unary([](double x) { return 2.5 * x; })),
      Case("shape [3, -1]").Def(Op("Reshape", {"X"}, {"Y", "old"}, {Ints("shape", {3, -1})})).Inputs({In({2, 3, 4})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            return RefTensors{RefTensor({3, 8}, in[0].data), RefTensor({3}, {2, 3, 4}, DataType::Int64)};
          }),
      Case("axis 1").Def(Op("Flatten", {"X"}, {"Y"})).Inputs({In({2, 3, 4})}).Ref(Identity({2, 12})),
      Case("axis 2").Def(Op("Flatten", {"X"}, {"Y"}, {Arg("axis", 2)})).Inputs({In({2, 3, 4})}).Ref(Identity({6, 4})),
  };
  return c;
}

}  // namespace harness
}  // namespace hetnet
