// Harness cases for NonZero, Compress, ReverseSequence (operators/select_ops.*) and Unique
// (operators/unique_op.*). References are naive loops written from the ONNX definitions; Unique's
// compares slices pairwise and ranks them by counting (no sorting or maps, unlike the kernel).
#include <string>
#include <vector>

#include "tests/cpp/onnx_index_ref_util.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

using namespace onnx_ref;  // NOLINT
const DataType i32 = DataType::Int32, i64 = DataType::Int64, f64 = DataType::Double;

RefTensors NonZeroRef(const caffe2::OperatorDef&, const RefTensors& in) {
  std::vector<int64_t> hits;
  for (int64_t k = 0; k < in[0].numel(); ++k)
    if (in[0][k] != 0) hits.push_back(k);
  const int64_t r = static_cast<int64_t>(in[0].shape.size()), n = static_cast<int64_t>(hits.size());
  RefTensor Y({r, n}, i64);
  for (int64_t j = 0; j < n; ++j) {
    const auto c = Coords(hits[j], in[0].shape);
    for (int64_t d = 0; d < r; ++d) Y[d * n + j] = static_cast<double>(c[d]);
  }
  return {Y};
}

RefTensors CompressRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &C = in[1];
  const bool flat = IntArg(def, "axis", -99) == -99;
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < C.numel(); ++k)
    if (C[k] != 0) keep.push_back(k);
  if (flat) {
    RefTensor Y({static_cast<int64_t>(keep.size())}, X.dtype);
    for (size_t j = 0; j < keep.size(); ++j) Y[j] = X[keep[j]];
    return {Y};
  }
  const int axis = static_cast<int>(Wrap(static_cast<double>(IntArg(def, "axis", 0)), X.shape.size()));
  std::vector<int64_t> shape = X.shape;
  shape[axis] = static_cast<int64_t>(keep.size());
  RefTensor Y(shape, X.dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    auto c = Coords(k, shape);
    c[axis] = keep[c[axis]];
    Y[k] = X[Flat(c, X.shape)];
  }
  return {Y};
}

RefTensors ReverseSequenceRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &L = in[1];
  const int b = static_cast<int>(IntArg(def, "batch_axis", 1)), t = static_cast<int>(IntArg(def, "time_axis", 0));
  RefTensor Y(X.shape, X.dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    auto c = Coords(k, X.shape);
    const int64_t len = static_cast<int64_t>(L[c[b]]);
    if (c[t] < len) c[t] = len - 1 - c[t];
    Y[k] = X[Flat(c, X.shape)];
  }
  return {Y};
}

// Unique by pairwise comparison of slices (no map): a slice is new when no earlier slice equals it;
// sorted order by counting the uniques lexicographically smaller.
RefTensors UniqueRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const int64_t axis_arg = IntArg(def, "axis", -99);
  const bool flat = axis_arg == -99, sorted = IntArg(def, "sorted", 1) != 0;
  const int r = static_cast<int>(X.shape.size());
  const int axis = flat ? 0 : static_cast<int>(Wrap(static_cast<double>(axis_arg), r));
  int64_t outer = 1, n = X.numel(), inner = 1;
  if (!flat) {
    n = X.shape[axis];
    for (int d = 0; d < axis; ++d) outer *= X.shape[d];
    for (int d = axis + 1; d < r; ++d) inner *= X.shape[d];
  }
  auto slice = [&](int64_t j) {
    std::vector<double> v;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) v.push_back(X[(o * n + j) * inner + i]);
    return v;
  };
  std::vector<int64_t> firsts;
  for (int64_t j = 0; j < n; ++j) {
    bool seen = false;
    for (int64_t f : firsts) seen |= slice(f) == slice(j);
    if (!seen) firsts.push_back(j);
  }
  const int64_t u = static_cast<int64_t>(firsts.size());
  std::vector<int64_t> at(u);  // output position of each unique (first-occurrence order)
  for (int64_t a = 0; a < u; ++a)
    for (int64_t b = 0; b < u; ++b) at[a] += sorted ? slice(firsts[b]) < slice(firsts[a]) : b < a;
  std::vector<int64_t> shape = {u};
  if (!flat) shape = X.shape, shape[axis] = u;
  RefTensor Y(shape, X.dtype), I({u}, i64), V({n}, i64), C({u}, i64);
  for (int64_t a = 0; a < u; ++a) {
    const auto v = slice(firsts[a]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) Y[(o * u + at[a]) * inner + i] = v[o * inner + i];
    I[at[a]] = static_cast<double>(firsts[a]);
  }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t a = 0; a < u; ++a)
      if (slice(firsts[a]) == slice(j)) V[j] = static_cast<double>(at[a]), C[at[a]] += 1;
  return {Y, I, V, C};
}

}  // namespace

HN_OP_CASES(OnnxSelect) {
  const caffe2::OperatorDef unique = Op("Unique", {"X"}, {"Y", "I", "V", "C"});
  auto with = [](caffe2::OperatorDef d, std::vector<caffe2::Argument> args) {
    for (const auto& a : args) *d.add_arg() = a;
    return d;
  };
  std::vector<Case> c = {
      Case("sorted, flat").Def(unique).Inputs({In({3, 4}, i32).Range(-3, 3)}).Ref(UniqueRef),
      Case("first-occurrence order, float").Def(with(unique, {Arg("sorted", 0)}))
          .Inputs({In({7}).Values({2, -1, 2, 0.5, -1, 3, 0.5})}).Ref(UniqueRef),
      Case("axis 1").Def(with(unique, {Arg("axis", 1)}))
          .Inputs({In({2, 5}, i64).Values({1, 0, 1, 2, 0, 3, 4, 3, 1, 4})}).Ref(UniqueRef),
      Case("axis -3, unsorted").Def(with(unique, {Arg("axis", -3), Arg("sorted", 0)}))
          .Inputs({In({4, 2, 1}, f64).Values({1, 2, 0, 0, 1, 2, 0, 1})}).Ref(UniqueRef),
      Case("float 3-D").Def(Op("NonZero", {"X"}, {"Y"})).Inputs({In({2, 3, 2}).Values({0, 1, 0, 0, 2, 3, 0, 0, 0, 4, 0, 5})})
          .Ref(NonZeroRef),
      Case("bool").Def(Op("NonZero", {"X"}, {"Y"})).Inputs({In({5}, DataType::Bool).Values({1, 0, 1, 1, 0})}).Ref(NonZeroRef),
      Case("all zero").Def(Op("NonZero", {"X"}, {"Y"})).Inputs({In({2, 2}, i32).Values({0, 0, 0, 0})}).Ref(NonZeroRef),
      Case("axis 1").Def(Op("Compress", {"X", "C"}, {"Y"}, {Arg("axis", 1)}))
          .Inputs({In({2, 4, 3}), In({4}, DataType::Bool).Values({1, 0, 1, 1})}).Ref(CompressRef),
      Case("axis -1, short condition").Def(Op("Compress", {"X", "C"}, {"Y"}, {Arg("axis", -1)}))
          .Inputs({In({3, 5}, i64).Range(-9, 9), In({3}, DataType::Bool).Values({0, 1, 1})}).Ref(CompressRef),
      Case("flattened").Def(Op("Compress", {"X", "C"}, {"Y"}))
          .Inputs({In({2, 3}, f64), In({5}, DataType::Bool).Values({1, 1, 0, 0, 1})}).Ref(CompressRef),
      Case("time 0, batch 1").Def(Op("ReverseSequence", {"X", "L"}, {"Y"}))
          .Inputs({In({4, 3, 2}), In({3}, i64).Values({4, 1, 3})}).Ref(ReverseSequenceRef),
      Case("batch 0, time 1").Def(Op("ReverseSequence", {"X", "L"}, {"Y"}, {Arg("batch_axis", 0), Arg("time_axis", 1)}))
          .Inputs({In({3, 5}, i32).Range(-99, 99), In({3}, i32).Values({0, 5, 2})}).Ref(ReverseSequenceRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

}  // namespace harness
}  // namespace hetnet
