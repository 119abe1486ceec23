// Harness cases for numpy broadcasting in the binary ops and for the tensor operators Shape, Expand,
// Where, Gather, ArgMax/ArgMin, Slice. References are naive float64 loops over the output index,
// written from numpy's and Caffe2's definitions (not from the kernels).
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

const DataType i32 = DataType::Int32, i64 = DataType::Int64, b8 = DataType::Bool, f64 = DataType::Double;

std::vector<int64_t> Unravel(int64_t k, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) { idx[d] = k % shape[d]; k /= shape[d]; }
  return idx;
}
// The element of `t` that broadcast index `idx` (of a possibly longer shape) reads.
double At(const RefTensor& t, const std::vector<int64_t>& idx) {
  const size_t lead = idx.size() - t.shape.size();
  int64_t off = 0;
  for (size_t j = 0; j < t.shape.size(); ++j) off = off * t.shape[j] + (t.shape[j] == 1 ? 0 : idx[lead + j]);
  return t[off];
}
std::vector<int64_t> BroadcastShape(const std::vector<std::vector<int64_t>>& shapes) {
  size_t n = 0;
  for (const auto& s : shapes) n = std::max(n, s.size());
  std::vector<int64_t> out(n, 1);
  for (const auto& s : shapes)
    for (size_t j = 0; j < s.size(); ++j)
      if (s[j] != 1) out[n - s.size() + j] = s[j];
  return out;
}

template <typename F>
RefFn NumpyBinary(F f, DataType out_dtype = DataType::Float) {
  return [f, out_dtype](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor c(BroadcastShape({in[0].shape, in[1].shape}), out_dtype);
    for (int64_t k = 0; k < c.numel(); ++k) {
      const auto idx = Unravel(k, c.shape);
      c[k] = f(At(in[0], idx), At(in[1], idx));
    }
    return RefTensors{c};
  };
}

int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
std::vector<int64_t> IntsArg(const caffe2::OperatorDef& def, const std::string& name) {
  for (const auto& a : def.arg())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

RefTensors ShapeRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  std::vector<int64_t> dims = in[0].shape, axes = IntsArg(def, "axes");
  std::vector<double> v;
  if (axes.empty()) for (auto d : dims) v.push_back(d);
  for (auto a : axes) v.push_back(dims[a < 0 ? a + dims.size() : a]);
  const int64_t n = static_cast<int64_t>(v.size());
  return {RefTensor({n}, v, i64)};
}

RefTensors ExpandRef(const caffe2::OperatorDef&, const RefTensors& in) {
  std::vector<int64_t> shape(in[1].data.begin(), in[1].data.end());
  RefTensor y(BroadcastShape({in[0].shape, shape}), in[0].dtype);
  for (int64_t k = 0; k < y.numel(); ++k) y[k] = At(in[0], Unravel(k, y.shape));
  return {y};
}

RefTensors WhereRef(const caffe2::OperatorDef&, const RefTensors& in) {
  RefTensor z(BroadcastShape({in[0].shape, in[1].shape, in[2].shape}), in[1].dtype);
  for (int64_t k = 0; k < z.numel(); ++k) {
    const auto idx = Unravel(k, z.shape);
    z[k] = At(in[0], idx) != 0 ? At(in[1], idx) : At(in[2], idx);
  }
  return {z};
}

RefTensors GatherRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &D = in[0], &I = in[1];
  int64_t axis = IntArg(def, "axis", 0);
  if (axis < 0) axis += D.shape.size();
  std::vector<int64_t> shape(D.shape.begin(), D.shape.begin() + axis);
  shape.insert(shape.end(), I.shape.begin(), I.shape.end());
  shape.insert(shape.end(), D.shape.begin() + axis + 1, D.shape.end());
  RefTensor y(shape, D.dtype);
  for (int64_t k = 0; k < y.numel(); ++k) {
    const auto idx = Unravel(k, shape);
    // Output index: [pre (axis dims), indices' dims, post]; data index: [pre, I[...], post].
    int64_t ioff = 0;
    for (size_t j = 0; j < I.shape.size(); ++j) ioff = ioff * I.shape[j] + idx[axis + j];
    int64_t i = static_cast<int64_t>(I[ioff]);
    if (i < 0) i += D.shape[axis];
    int64_t doff = 0;
    for (size_t d = 0; d < D.shape.size(); ++d) {
      const int64_t v = static_cast<int64_t>(d) < axis ? idx[d] : static_cast<int64_t>(d) == axis ? i
                                                                  : idx[d - 1 + I.shape.size()];
      doff = doff * D.shape[d] + v;
    }
    y[k] = D[doff];
  }
  return {y};
}

template <bool IsMax>
RefTensors ArgRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  int64_t axis = IntArg(def, "axis", -1);
  if (axis < 0) axis += X.shape.size();
  const bool keep = IntArg(def, "keepdims", 1) != 0;
  std::vector<int64_t> kept = X.shape;
  kept[axis] = 1;
  RefTensor y(kept, i64);
  for (int64_t k = 0; k < y.numel(); ++k) {
    auto idx = Unravel(k, kept);
    int64_t best = 0;
    double bv = 0;
    for (int64_t j = 0; j < X.shape[axis]; ++j) {
      idx[axis] = j;
      int64_t off = 0;
      for (size_t d = 0; d < X.shape.size(); ++d) off = off * X.shape[d] + idx[d];
      if (j == 0 || (IsMax ? X[off] > bv : X[off] < bv)) { bv = X[off]; best = j; }
    }
    y[k] = best;
  }
  if (!keep) y.shape.erase(y.shape.begin() + axis);
  return {y};
}

// Caffe2's Slice: negative v is dim + 1 + v, clamped to the dim.
RefTensors SliceRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  std::vector<int64_t> starts = IntsArg(def, "starts"), ends = IntsArg(def, "ends");
  if (in.size() == 3) {
    starts.assign(in[1].data.begin(), in[1].data.end());
    ends.assign(in[2].data.begin(), in[2].data.end());
  }
  std::vector<int64_t> lo(X.shape.size(), 0), shape = X.shape;
  for (size_t d = 0; d < starts.size(); ++d) {
    const int64_t n = X.shape[d];
    int64_t s = starts[d] < 0 ? starts[d] + n + 1 : starts[d], e = ends[d] < 0 ? ends[d] + n + 1 : ends[d];
    s = std::min(s, n);
    e = std::min(e, n);
    lo[d] = s;
    shape[d] = e - s;
  }
  RefTensor y(shape, X.dtype);
  for (int64_t k = 0; k < y.numel(); ++k) {
    const auto idx = Unravel(k, shape);
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d) off = off * X.shape[d] + idx[d] + lo[d];
    y[k] = X[off];
  }
  return {y};
}

}  // namespace

HN_OP_CASES(NumpyBroadcast) {
  auto add = [](double a, double b) { return a + b; };
  auto sub = [](double a, double b) { return a - b; };
  auto mul = [](double a, double b) { return a * b; };
  auto div = [](double a, double b) { return a / b; };
  auto gt = [](double a, double b) { return a > b ? 1.0 : 0.0; };
  auto le = [](double a, double b) { return a <= b ? 1.0 : 0.0; };
  return {
      Case("numpy [2,3,4]+[4]").Def(Op("Add", {"A", "B"}, {"C"})).Inputs({In({2, 3, 4}), In({4})}).Ref(NumpyBinary(add)),
      Case("numpy [2,1,4]+[3,1]").Def(Op("Add", {"A", "B"}, {"C"})).Inputs({In({2, 1, 4}), In({3, 1})}).Ref(NumpyBinary(add)),
      Case("numpy scalar+[2,3]").Def(Op("Sub", {"A", "B"}, {"C"})).Inputs({In({}), In({2, 3})}).Ref(NumpyBinary(sub)),
      Case("numpy [1]+[2,3]").Def(Op("Mul", {"A", "B"}, {"C"})).Inputs({In({1}), In({2, 3})}).Ref(NumpyBinary(mul)),
      Case("numpy [3,1,2]*[1,4,1]").Def(Op("Mul", {"A", "B"}, {"C"})).Inputs({In({3, 1, 2}), In({1, 4, 1})})
          .Ref(NumpyBinary(mul)),
      Case("numpy [2,3]/[2,1]").Def(Op("Div", {"A", "B"}, {"C"})).Inputs({In({2, 3}), In({2, 1}).Range(0.5, 2)})
          .Ref(NumpyBinary(div)),
      Case("numpy [4]/[3,1]").Def(Op("Div", {"A", "B"}, {"C"})).Inputs({In({4}), In({3, 1}).Range(0.5, 2)})
          .Ref(NumpyBinary(div)),
      Case("numpy int32 [2,1]+[3]").Def(Op("Add", {"A", "B"}, {"C"})).Inputs({In({2, 1}, i32).Range(-9, 9), In({3}, i32).Range(-9, 9)})
          .Ref(NumpyBinary(add, i32)),
      Case("numpy int64 [3]*[2,1]").Def(Op("Mul", {"A", "B"}, {"C"})).Inputs({In({3}, i64).Range(-9, 9), In({2, 1}, i64).Range(-9, 9)})
          .Ref(NumpyBinary(mul, i64)),
      Case("numpy [2,1,3]>[4,1]").Def(Op("GT", {"A", "B"}, {"C"})).Inputs({In({2, 1, 3}), In({4, 1})}).Ref(NumpyBinary(gt, b8)),
      Case("numpy int32 []<=[5]").Def(Op("LE", {"A", "B"}, {"C"})).Inputs({In({}, i32).Values({0}), In({5}, i32).Range(-2, 2)})
          .Ref(NumpyBinary(le, b8)),
  };
}

HN_OP_CASES(TensorOps) {
  std::vector<Case> c = {
      // Shape
      Case("dims").Def(Op("Shape", {"X"}, {"Y"})).Inputs({In({2, 3, 4})}).Ref(ShapeRef),
      Case("axes [-1, 0]").Def(Op("Shape", {"X"}, {"Y"}, {Ints("axes", {-1, 0})})).Inputs({In({2, 3, 4})}).Ref(ShapeRef),
      Case("scalar").Def(Op("Shape", {"X"}, {"Y"})).Inputs({In({})}).Ref(ShapeRef),
      // Expand
      Case("[3,1] to [2,3,4]").Def(Op("Expand", {"X", "S"}, {"Y"})).Inputs({In({3, 1}), In({3}, i64).Values({2, 3, 4})})
          .Ref(ExpandRef),
      Case("[2,1,4] with shape [3,1] (1 keeps X's dim)").Def(Op("Expand", {"X", "S"}, {"Y"}))
          .Inputs({In({2, 1, 4}), In({2}, i64).Values({3, 1})}).Ref(ExpandRef),
      Case("int32 X, int32 shape").Def(Op("Expand", {"X", "S"}, {"Y"}))
          .Inputs({In({1, 3}, i32).Range(-5, 5), In({2}, i32).Values({2, 3})}).Ref(ExpandRef),
      // Where
      Case("same shape").Def(Op("Where", {"C", "X", "Y"}, {"Z"}))
          .Inputs({In({2, 3}, b8).Values({1, 0, 1, 0, 0, 1}), In({2, 3}), In({2, 3})}).Ref(WhereRef).NoGrad(),
      Case("broadcast [2,1,3] [4,1] [3]").Def(Op("Where", {"C", "X", "Y"}, {"Z"}))
          .Inputs({In({2, 1, 3}, b8).Values({1, 0, 1, 0, 1, 1}), In({4, 1}), In({3})}).Ref(WhereRef).NoGrad(),
      Case("int64 scalar condition").Def(Op("Where", {"C", "X", "Y"}, {"Z"}))
          .Inputs({In({}, b8).Values({0}), In({3}, i64).Range(-5, 5), In({2, 1}, i64).Range(-5, 5)}).Ref(WhereRef),
      // Gather
      Case("axis 0, int64").Def(Op("Gather", {"D", "I"}, {"Y"}))
          .Inputs({In({5, 3}), In({4}, i64).Values({4, 0, 2, 0})}).Ref(GatherRef),
      Case("axis 1, int32 2-d indices, negative").Def(Op("Gather", {"D", "I"}, {"Y"}, {Arg("axis", 1)}))
          .Inputs({In({2, 4, 3}), In({2, 2}, i32).Values({-1, 0, 3, -4})}).Ref(GatherRef),
      Case("axis -1, repeated indices").Def(Op("Gather", {"D", "I"}, {"Y"}, {Arg("axis", -1)}))
          .Inputs({In({3, 4}), In({5}, i64).Values({1, 1, 3, 0, 1})}).Ref(GatherRef),
      Case("int64 data, scalar index").Def(Op("Gather", {"D", "I"}, {"Y"}))
          .Inputs({In({4, 2}, i64).Range(-9, 9), In({}, i64).Values({2})}).Ref(GatherRef),
      // ArgMax / ArgMin
      Case("axis -1").Def(Op("ArgMax", {"X"}, {"Y"})).Inputs({In({3, 5}).Distinct()}).Ref(ArgRef<true>),
      Case("axis 1 keepdims 0").Def(Op("ArgMax", {"X"}, {"Y"}, {Arg("axis", 1), Arg("keepdims", 0)}))
          .Inputs({In({2, 4, 3}).Distinct()}).Ref(ArgRef<true>),
      Case("int32 ties: first").Def(Op("ArgMax", {"X"}, {"Y"}, {Arg("axis", 0)}))
          .Inputs({In({4, 3}, i32).Values({1, 5, 2, 3, 5, 2, 3, 0, 2, 1, 5, 0})}).Ref(ArgRef<true>),
      Case("axis 0").Def(Op("ArgMin", {"X"}, {"Y"}, {Arg("axis", 0)})).Inputs({In({4, 3}).Distinct()}).Ref(ArgRef<false>),
      Case("int64 keepdims 0 ties").Def(Op("ArgMin", {"X"}, {"Y"}, {Arg("keepdims", 0)}))
          .Inputs({In({2, 4}, i64).Values({3, 1, 1, 2, -1, 0, -1, 5})}).Ref(ArgRef<false>),
      // Slice
      Case("args, leading dims").Def(Op("Slice", {"X"}, {"Y"}, {Ints("starts", {1, 0}), Ints("ends", {3, 2})}))
          .Inputs({In({4, 5, 2})}).Ref(SliceRef),
      Case("negative end -1 is the end").Def(Op("Slice", {"X"}, {"Y"}, {Ints("starts", {0, 1}), Ints("ends", {-1, -2})}))
          .Inputs({In({2, 4})}).Ref(SliceRef),
      Case("inputs int64, middle dim").Def(Op("Slice", {"X", "S", "E"}, {"Y"}))
          .Inputs({In({3, 6, 2}), In({3}, i64).Values({0, 2, 0}), In({3}, i64).Values({-1, 5, -1})}).Ref(SliceRef),
      Case("inputs int32, clamped end").Def(Op("Slice", {"X", "S", "E"}, {"Y"}))
          .Inputs({In({5, 3}), In({1}, i32).Values({-3}), In({1}, i32).Values({100})}).Ref(SliceRef),
      Case("empty range, int32 data").Def(Op("Slice", {"X"}, {"Y"}, {Ints("starts", {2}), Ints("ends", {2})}))
          .Inputs({In({4, 3}, i32).Range(-5, 5)}).Ref(SliceRef),
  };
  return c;
}

}  // namespace harness
}  // namespace hetnet
