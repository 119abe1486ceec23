// Harness cases: FCTransposed, MatMul, BatchMatMul, Concat, Split, Transpose, Squeeze, ExpandDims,
// ChannelShuffle, Cast, FloatToHalf, HalfToFloat, ReduceSum, ReduceMean. Naive float64 references.
#include <algorithm>
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

int64_t ArgI(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
std::vector<int64_t> ArgInts(const caffe2::OperatorDef& def, const std::string& name) {
  for (const auto& a : def.arg())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return {};
}
int64_t Prod(const std::vector<int64_t>& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; ++i) p *= s[i];
  return p;
}
// C[M, N] = op(A) op(B) from offsets into a and b.
void Gemm(const RefTensor& a, int64_t ao, const RefTensor& b, int64_t bo, bool ta, bool tb, int64_t M, int64_t N,
          int64_t K, RefTensor* c, int64_t co) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += a[ao + (ta ? k * M + i : i * K + k)] * b[bo + (tb ? j * K + k : k * N + j)];
      (*c)[co + i * N + j] = s;
    }
}

RefTensors FCTransposedRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t M = in[0].dim(0), K = in[0].numel() / M, N = in[1].dim(-1);
  RefTensor y({M, N});
  Gemm(in[0], 0, in[1], 0, false, false, M, N, K, &y, 0);
  for (int64_t i = 0; i < M * N; ++i) y[i] += in[2][i % N];
  return {y};
}

// FC on float16 tensors: Y = X W^T + b, a float16 output.
RefTensors FCHalfRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t M = in[0].dim(0), K = in[0].numel() / M, N = in[1].dim(0);
  RefTensor y({M, N}, DataType::Float16);
  Gemm(in[0], 0, in[1], 0, false, true, M, N, K, &y, 0);
  for (int64_t i = 0; i < M * N; ++i) y[i] += in[2][i % N];
  return {y};
}

RefTensors MatMulRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const bool ta = ArgI(def, "trans_a", 0), tb = ArgI(def, "trans_b", 0);
  const auto &as = in[0].shape, &bs = in[1].shape;
  const size_t axa = ArgI(def, "axis_a", 1), axb = ArgI(def, "axis_b", 1);
  const int64_t a0 = Prod(as, 0, axa), a1 = Prod(as, axa, as.size()), b0 = Prod(bs, 0, axb), b1 = Prod(bs, axb, bs.size());
  const int64_t M = ta ? a1 : a0, K = ta ? a0 : a1, N = tb ? b0 : b1;
  RefTensor y({M, N});
  Gemm(in[0], 0, in[1], 0, ta, tb, M, N, K, &y, 0);
  return {y};
}

// Same-rank batches, or broadcast of a shorter operand over the longer's leading batch dims.
RefTensors BatchMatMulRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const bool ta = ArgI(def, "trans_a", 0), tb = ArgI(def, "trans_b", 0);
  const auto &as = in[0].shape, &bs = in[1].shape;
  const size_t na = as.size(), nb = bs.size();
  const int64_t M = ta ? as[na - 1] : as[na - 2], K = ta ? as[na - 2] : as[na - 1], N = tb ? bs[nb - 2] : bs[nb - 1];
  const auto& longer = na >= nb ? as : bs;
  std::vector<int64_t> ys(longer.begin(), longer.end() - 2);
  ys.push_back(M);
  ys.push_back(N);
  RefTensor y(ys);
  const int64_t batches = Prod(longer, 0, longer.size() - 2), ab = Prod(as, 0, na - 2), bb = Prod(bs, 0, nb - 2);
  for (int64_t t = 0; t < batches; ++t) Gemm(in[0], (t % ab) * M * K, in[1], (t % bb) * K * N, ta, tb, M, N, K, &y, t * M * N);
  return {y};
}

// Concat along `axis` (default 1) or stacking with add_axis; split_info as int32.
RefTensors ConcatRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const bool add = ArgI(def, "add_axis", 0);
  const auto& s0 = in[0].shape;
  const int64_t nd = static_cast<int64_t>(s0.size()) + (add ? 1 : 0);
  int64_t axis = ArgI(def, "axis", 1);
  if (axis < 0) axis += nd;
  const int64_t outer = Prod(s0, 0, axis), after = Prod(s0, add ? axis : axis + 1, s0.size());
  std::vector<int64_t> ys = s0;
  RefTensor info({static_cast<int64_t>(in.size())}, DataType::Int32);
  int64_t total = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    info[i] = add ? 1 : static_cast<double>(in[i].shape[axis]);
    total += static_cast<int64_t>(info[i]);
  }
  if (add) ys.insert(ys.begin() + axis, static_cast<int64_t>(in.size()));
  else ys[axis] = total;
  RefTensor y(ys);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t row = static_cast<int64_t>(info[i]) * after;
      for (int64_t e = 0; e < row; ++e) y[k++] = in[i][o * row + e];
    }
  return {y, info};
}

// Split by the `split` argument or by input 1, or equally.
RefTensors SplitRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const auto& xs = in[0].shape;
  int64_t axis = ArgI(def, "axis", 1);
  if (axis < 0) axis += xs.size();
  std::vector<int64_t> sizes = ArgInts(def, "split");
  if (in.size() > 1) sizes.assign(in[1].data.begin(), in[1].data.end());
  const int64_t n = def.output_size();
  if (sizes.empty()) sizes.assign(n, xs[axis] / n);
  const int64_t outer = Prod(xs, 0, axis), after = Prod(xs, axis + 1, xs.size());
  RefTensors outs;
  int64_t off = 0;
  for (int64_t s : sizes) {
    std::vector<int64_t> shape = xs;
    shape[axis] = s;
    RefTensor y(shape);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < s * after; ++e) y[o * s * after + e] = in[0][o * xs[axis] * after + off + e];
    off += s * after;
    outs.push_back(y);
  }
  return outs;
}

RefTensors TransposeRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const auto& xs = in[0].shape;
  const int nd = static_cast<int>(xs.size());
  std::vector<int64_t> axes = ArgInts(def, "axes");
  if (axes.empty())
    for (int i = nd - 1; i >= 0; --i) axes.push_back(i);
  std::vector<int64_t> ys(nd), st(nd, 1);
  for (int i = nd - 2; i >= 0; --i) st[i] = st[i + 1] * xs[i + 1];
  for (int i = 0; i < nd; ++i) ys[i] = xs[axes[i]];
  RefTensor y(ys);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rem = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rem % ys[d]) * st[axes[d]];
      rem /= ys[d];
    }
    y[i] = in[0][off];
  }
  return {y};
}

RefFn Reshaped(std::vector<int64_t> shape) {
  return [shape](const caffe2::OperatorDef&, const RefTensors& in) { return RefTensors{RefTensor(shape, in[0].data)}; };
}

RefTensors ChannelShuffleRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const auto& xs = in[0].shape;
  bool nhwc = false;
  for (const auto& a : def.arg())
    if (a.name() == "order") nhwc = a.s() == "NHWC";
  const int64_t G = ArgI(def, "group", 1), C = nhwc ? xs.back() : xs[1], K = C / G;
  const int64_t inner = nhwc ? 1 : Prod(xs, 2, xs.size());
  RefTensor y(xs);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t n = i / (C * inner), c = (i / inner) % C, s = i % inner;
    y[i] = in[0][(n * C + (c % G) * K + c / G) * inner + s];  // Y channel k*G+g = X channel g*K+k
  }
  return {y};
}

// Cast: values convert as C++ does (truncation toward zero to integers); dtype from `to`.
RefFn CastTo(DataType to) {
  return [to](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor y(in[0].shape, to);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double v = in[0][i];
      if (to == DataType::Float) y[i] = static_cast<float>(v);
      else if (to == DataType::Float16) y[i] = HalfToFloat(FloatToHalf(static_cast<float>(v)));
      else if (to == DataType::Double) y[i] = v;
      else if (to == DataType::Bool) y[i] = v != 0;
      else y[i] = std::trunc(v);
    }
    return RefTensors{y};
  };
}

RefFn Reduce(bool mean) {
  return [mean](const caffe2::OperatorDef& def, const RefTensors& in) {
    const auto& xs = in[0].shape;
    const int nd = static_cast<int>(xs.size());
    std::vector<int64_t> axes = ArgInts(def, "axes");
    std::vector<bool> red(nd, axes.empty());
    for (auto a : axes) red[a < 0 ? a + nd : a] = true;
    const bool keep = ArgI(def, "keepdims", 1);
    std::vector<int64_t> ys;
    int64_t cnt = 1;
    for (int d = 0; d < nd; ++d) {
      if (red[d]) cnt *= xs[d];
      if (!red[d]) ys.push_back(xs[d]);
      else if (keep) ys.push_back(1);
    }
    RefTensor y(ys, in[0].dtype);
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
      y[o] += in[0][i];
    }
    if (mean)
      for (auto& v : y.data) v /= static_cast<double>(cnt);
    return RefTensors{y};
  };
}

}  // namespace

HN_OP_CASES(MatMulShapeOps) {
  const DataType i32 = DataType::Int32, f16 = DataType::Float16;
  std::vector<Case> c = {
      Case("6 -> 3").Def(Op("FCTransposed", {"X", "W", "b"}, {"Y"})).Inputs({In({4, 6}), In({6, 3}), In({3})})
          .Ref(FCTransposedRef),
      Case("float16 (tensor cores on CUDA)").Def(Op("FC", {"X", "W", "b"}, {"Y"}))
          .Inputs({In({5, 16}, f16), In({8, 16}, f16), In({8}, f16)}).Ref(FCHalfRef).NoGrad(),
      Case("plain").Def(Op("MatMul", {"A", "B"}, {"Y"})).Inputs({In({4, 5}), In({5, 3})}).Ref(MatMulRef),
      Case("trans_a").Def(Op("MatMul", {"A", "B"}, {"Y"}, {Arg("trans_a", 1)})).Inputs({In({5, 4}), In({5, 3})})
          .Ref(MatMulRef),
      Case("trans_b").Def(Op("MatMul", {"A", "B"}, {"Y"}, {Arg("trans_b", 1)})).Inputs({In({4, 5}), In({3, 5})})
          .Ref(MatMulRef),
      Case("trans both").Def(Op("MatMul", {"A", "B"}, {"Y"}, {Arg("trans_a", 1), Arg("trans_b", 1)}))
          .Inputs({In({5, 4}), In({3, 5})}).Ref(MatMulRef),
      Case("axis_a 2").Def(Op("MatMul", {"A", "B"}, {"Y"}, {Arg("axis_a", 2)})).Inputs({In({2, 3, 4}), In({4, 3})})
          .Ref(MatMulRef),
      Case("batch 3").Def(Op("BatchMatMul", {"A", "B"}, {"Y"})).Inputs({In({3, 4, 5}), In({3, 5, 2})})
          .Ref(BatchMatMulRef),
      Case("batch trans both").Def(Op("BatchMatMul", {"A", "B"}, {"Y"}, {Arg("trans_a", 1), Arg("trans_b", 1)}))
          .Inputs({In({2, 2, 5, 4}), In({2, 2, 3, 5})}).Ref(BatchMatMulRef),
      Case("broadcast B").Def(Op("BatchMatMul", {"A", "B"}, {"Y"}, {Arg("broadcast", 1)}))
          .Inputs({In({2, 3, 4, 5}), In({3, 5, 2})}).Ref(BatchMatMulRef).NoGrad(),
      Case("axis 1").Def(Op("Concat", {"A", "B"}, {"Y", "info"})).Inputs({In({2, 3, 2}), In({2, 1, 2})}).Ref(ConcatRef),
      Case("axis -1, 3 inputs").Def(Op("Concat", {"A", "B", "C"}, {"Y", "info"}, {Arg("axis", -1)}))
          .Inputs({In({2, 3}), In({2, 1}), In({2, 4})}).Ref(ConcatRef),
      Case("add_axis").Def(Op("Concat", {"A", "B"}, {"Y", "info"}, {Arg("axis", 0), Arg("add_axis", 1)}))
          .Inputs({In({2, 3}), In({2, 3})}).Ref(ConcatRef),
      Case("int32").Def(Op("Concat", {"A", "B"}, {"Y", "info"})).Inputs({In({2, 2}, i32).Range(-9, 9), In({2, 3}, i32).Range(-9, 9)})
          .Ref([](const caffe2::OperatorDef& d, const RefTensors& in) {
            auto r = ConcatRef(d, in);
            r[0].dtype = DataType::Int32;
            return r;
          })
          .NoGrad(),
      Case("split arg").Def(Op("Split", {"X"}, {"a", "b"}, {Ints("split", {4, 2})})).Inputs({In({2, 6, 3})})
          .Ref(SplitRef).GradOutputs({0, 1}),
      Case("equal").Def(Op("Split", {"X"}, {"a", "b", "c"}, {Arg("axis", -1)})).Inputs({In({2, 6})}).Ref(SplitRef)
          .GradOutputs({0, 1, 2}),
      Case("split input").Def(Op("Split", {"X", "S"}, {"a", "b"})).Inputs({In({3, 5}), In({2}, i32).Values({1, 4})})
          .Ref(SplitRef).GradOutputs({0, 1}).NoShapeCheck(),
      Case("reverse").Def(Op("Transpose", {"X"}, {"Y"})).Inputs({In({2, 3, 4})}).Ref(TransposeRef),
      Case("axes 0 2 3 1").Def(Op("Transpose", {"X"}, {"Y"}, {Ints("axes", {0, 2, 3, 1})})).Inputs({In({2, 3, 2, 4})})
          .Ref(TransposeRef),
      Case("dims 0 2").Def(Op("Squeeze", {"X"}, {"Y"}, {Ints("dims", {0, 2})})).Inputs({In({1, 3, 1, 2})})
          .Ref(Reshaped({3, 2})),
      Case("dims 0 3").Def(Op("ExpandDims", {"X"}, {"Y"}, {Ints("dims", {0, 3})})).Inputs({In({3, 2})})
          .Ref(Reshaped({1, 3, 2, 1})),
      Case("group 2").Def(Op("ChannelShuffle", {"X"}, {"Y"}, {Arg("group", 2)})).Inputs({In({2, 6, 2, 2})})
          .Ref(ChannelShuffleRef),
      Case("group 3 NHWC").Def(Op("ChannelShuffle", {"X"}, {"Y"}, {Arg("group", 3), Arg("order", "NHWC")}))
          .Inputs({In({2, 2, 6})}).Ref(ChannelShuffleRef),
      Case("float -> double").Def(Op("Cast", {"X"}, {"Y"}, {Arg("to", 13), Arg("from_type", 1)})).Inputs({In({3, 4})})
          .Ref(CastTo(DataType::Double)),
      Case("float -> int32").Def(Op("Cast", {"X"}, {"Y"}, {Arg("to", 2)})).Inputs({In({3, 4}).Range(-5, 5)})
          .Ref(CastTo(DataType::Int32)).NoGrad(),
      Case("int32 -> float").Def(Op("Cast", {"X"}, {"Y"}, {Arg("to", "FLOAT")})).Inputs({In({7}, i32).Range(-100, 100)})
          .Ref(CastTo(DataType::Float)).NoGrad(),
      Case("float -> bool").Def(Op("Cast", {"X"}, {"Y"}, {Arg("to", 5)})).Inputs({In({6}).Values({0, 1, -2, 0.5, 0, 3})})
          .Ref(CastTo(DataType::Bool)).NoGrad(),
      Case("float -> float16").Def(Op("Cast", {"X"}, {"Y"}, {Arg("to", 12)})).Inputs({In({3, 5}).Range(-3, 3)})
          .Ref(CastTo(f16)).NoGrad(),
      Case("3x5").Def(Op("FloatToHalf", {"X"}, {"Y"})).Inputs({In({3, 5}).Range(-3, 3)}).Ref(CastTo(f16)).NoGrad(),
      Case("3x5").Def(Op("HalfToFloat", {"X"}, {"Y"})).Inputs({In({3, 5}, f16).Range(-3, 3)}).Ref(CastTo(DataType::Float))
          .NoGrad(),
      Case("all").Def(Op("ReduceSum", {"X"}, {"Y"})).Inputs({In({3, 4})}).Ref(Reduce(false)),
      Case("axes 1 3, keepdims 0").Def(Op("ReduceSum", {"X"}, {"Y"}, {Ints("axes", {1, 3}), Arg("keepdims", 0)}))
          .Inputs({In({2, 3, 2, 4})}).Ref(Reduce(false)),
      Case("int32 axis 0").Def(Op("ReduceSum", {"X"}, {"Y"}, {Ints("axes", {0})})).Inputs({In({3, 4}, i32).Range(-9, 9)})
          .Ref(Reduce(false)).NoGrad(),
      Case("axis -1").Def(Op("ReduceMean", {"X"}, {"Y"}, {Ints("axes", {-1})})).Inputs({In({3, 5})}).Ref(Reduce(true)),
      Case("axes 0 2, keepdims 0").Def(Op("ReduceMean", {"X"}, {"Y"}, {Ints("axes", {0, 2}), Arg("keepdims", 0)}))
          .Inputs({In({2, 3, 4})}).Ref(Reduce(true)),
  };
  return c;
}

}  // namespace harness
}  // namespace hetnet
