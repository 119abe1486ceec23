// Converters of the shape family: Shape, Size, Gather, GatherElements, Slice, Expand, Where, ArgMax / ArgMin, TopK, Hardmax, Trilu,
// ConstantOfShape, Range. Shape of a tensor whose dims the model fixes is folded into a constant (so
// the Reshape / Expand / Slice inputs computed from it stay import-time constants); Range and Size
// are import-time only.
#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

ConstTensor Int64s(std::vector<int64_t> v) {
  ConstTensor c;
  c.dtype = caffe2::TensorProto::INT64;
  c.dims = {static_cast<int64_t>(v.size())};
  c.integer = std::move(v);
  return c;
}

void Shape(ConvertContext& c) {
  const auto* d = c.Dims(c.in(0));
  const int rank = d ? static_cast<int>(d->size()) : -1;
  const bool ranged = c.opset() >= 15 && (c.Has("start") || c.Has("end"));
  int64_t start = 0, end = rank;
  if (ranged) {
    if (rank < 0) c.Refuse("start/end need the input's rank, which the model does not declare");
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    start = clamp(c.Int("start", 0));
    end = clamp(c.Int("end", rank));
  }
  if (d && std::count(d->begin() + std::min<int64_t>(start, rank), d->begin() + std::max(start, end), -1) == 0) {
    c.DefineConst(c.out(0), Int64s(std::vector<int64_t>(d->begin() + start, d->begin() + std::max(start, end))));
    return;
  }
  auto& op = c.Emit("Shape", {c.in(0)}, {c.out(0)});
  if (ranged) {
    std::vector<int64_t> axes;
    for (int64_t i = start; i < end; ++i) axes.push_back(i);
    AddArg(op, "axes", axes);
  }
  c.SetDims(c.out(0), {ranged ? std::max<int64_t>(end - start, 0) : rank});
}

void Gather(ConvertContext& c) {
  const int rank = c.Rank(c.in(0));
  const int64_t axis = c.Axis(c.Int("axis", 0), rank, "axis");
  AddArg(c.Emit("Gather", {c.in(0), c.in(1)}, {c.out(0)}), "axis", axis);
  const int irank = c.Rank(c.in(1));
  if (rank >= 0 && irank >= 0) c.SetRank(c.out(0), rank - 1 + irank);
}

// Slice with starts / ends / axes / steps computed at run time, or steps other than 1: our CPU
// OnnxSlice (ONNX's semantics), the inputs passed on.
void RuntimeSlice(ConvertContext& c) {
  std::vector<std::string> ins{c.in(0), c.in(1), c.in(2)};
  if (c.has_in(3)) {
    ins.push_back(c.in(3));
  } else if (c.has_in(4)) {  // steps without axes: the default axes 0..n-1, n the number of starts
    const ConstTensor* k = c.Const(c.in(1));
    const auto* d = c.Dims(c.in(1));
    const int64_t n = k ? k->numel() : d && d->size() == 1 ? (*d)[0] : -1;
    if (n < 0) c.Refuse("steps without axes need the number of starts at import time");
    ConstTensor axes;
    axes.dtype = caffe2::TensorProto::INT64;
    axes.dims = {n};
    for (int64_t i = 0; i < n; ++i) axes.integer.push_back(i);
    ins.push_back(c.AddConst(c.out(0) + "_axes", std::move(axes)));
  }
  if (c.has_in(4)) ins.push_back(c.in(4));
  c.Emit("OnnxSlice", ins, {c.out(0)});
  c.SetRank(c.out(0), c.Rank(c.in(0)));
}

// ONNX Slice (Python-style negatives, clamping, optional axes and steps) as our Slice over the
// leading dims: a negative ONNX index v (dim + v) is our v - 1 (dim + 1 + (v - 1)).
void Slice(ConvertContext& c) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.Ints("starts");
    ends = c.Ints("ends");
    axes = c.Ints("axes");
  } else {
    bool runtime = false;
    for (int i = 1; i < 5; ++i) runtime |= c.has_in(i) && !c.Const(c.in(i));
    if (!runtime && c.has_in(4))
      for (int64_t s : c.RequireConst(4, "steps").Ints("steps")) runtime |= s != 1;
    if (runtime) return RuntimeSlice(c);
    starts = c.RequireConst(1, "starts").Ints("starts");
    ends = c.RequireConst(2, "ends").Ints("ends");
    if (c.has_in(3)) axes = c.RequireConst(3, "axes").Ints("axes");
    if (c.has_in(4)) steps = c.RequireConst(4, "steps").Ints("steps");
  }
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size()))
    HN_THROW(kInvalidArgument, "Slice: starts, ends, axes and steps must have one entry per sliced axis");
  for (int64_t s : steps)
    if (s != 1) c.Refuse("steps other than 1 are not supported");
  const int rank = c.Rank(c.in(0));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  for (auto& a : axes) a = c.Axis(a, rank, "axis");
  const int64_t n = axes.empty() ? 0 : *std::max_element(axes.begin(), axes.end()) + 1;
  std::vector<int64_t> s(n, 0), e(n, -1);  // untouched dims: whole
  const auto* d = c.Dims(c.in(0));
  constexpr int64_t kBig = std::numeric_limits<int64_t>::max() / 4;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t dim = d ? (*d)[axes[i]] : -1;
    auto ours = [&](int64_t v, bool is_end) -> int64_t {
      if (v >= 0) return std::min(v, kBig);
      if (dim >= 0) return std::max<int64_t>(v + dim, 0);  // clamped like ONNX
      if (v < -kBig) c.Refuse("a very negative start/end needs the dim, which the model does not declare");
      return v - 1;
    };
    s[axes[i]] = ours(starts[i], false);
    e[axes[i]] = ours(ends[i], true);
    if (dim >= 0) {  // an empty ONNX range (start >= end after clamping) stays empty, not an error
      const int64_t a = std::min(s[axes[i]] < 0 ? dim + 1 + s[axes[i]] : s[axes[i]], dim);
      const int64_t b = std::min(e[axes[i]] < 0 ? dim + 1 + e[axes[i]] : e[axes[i]], dim);
      if (a > b) e[axes[i]] = s[axes[i]] = a;
    }
  }
  auto& op = c.Emit("Slice", {c.in(0)}, {c.out(0)});
  AddArg(op, "starts", s);
  AddArg(op, "ends", e);
  c.SetRank(c.out(0), rank);
}

// ArgMax / ArgMin; select_last_index=1 as n - 1 - arg(x reversed along the axis), the reversal a
// Gather of n-1..0 (the axis's length n must be known at import time).
void ArgMinMax(ConvertContext& c, const std::string& type) {
  const bool last = c.Int("select_last_index", 0) != 0;
  const int rank = c.Rank(c.in(0));
  const int64_t axis = c.Int("axis", 0);  // ONNX's default is 0, ours -1
  std::string x = c.in(0), out = c.out(0);
  int64_t n = -1;
  if (last) {
    const auto* d = c.Dims(c.in(0));
    n = d ? (*d)[c.Axis(axis, rank, "axis")] : -1;
    if (n < 1 || n > (int64_t{1} << 24))
      c.Refuse("select_last_index=1 needs the length of the axis at import time (at most 2^24)");
    ConstTensor rev;
    rev.dtype = caffe2::TensorProto::INT64;
    rev.dims = {n};
    for (int64_t i = n - 1; i >= 0; --i) rev.integer.push_back(i);
    x = c.Fresh(c.out(0) + "_reversed");
    AddArg(c.Emit("Gather", {c.in(0), c.AddConst(c.out(0) + "_reverse_index", std::move(rev))}, {x}), "axis",
           c.Axis(axis, rank, "axis"));
    out = c.Fresh(c.out(0) + "_from_end");
  }
  auto& op = c.Emit(type, {x}, {out});
  AddArg(op, "axis", axis);
  const bool keepdims = c.Int("keepdims", 1) != 0;
  AddArg(op, "keepdims", static_cast<int64_t>(keepdims));
  if (last) {
    ConstTensor top;
    top.dtype = caffe2::TensorProto::INT64;
    top.integer = {n - 1};
    c.Emit("Sub", {c.AddConst(c.out(0) + "_last", std::move(top)), out}, {c.out(0)});
  }
  if (rank >= 0) c.SetRank(c.out(0), keepdims ? rank : rank - 1);
}

// TopK: ours takes the k largest, lower index first on ties; for float32 the smallest are the largest
// of -x (any device); other numeric dtypes pass `largest` on to our CPU kernel (negation would wrap).
void TopK(ConvertContext& c) {
  using C2 = caffe2::TensorProto;
  const auto dt = c.Dtype(c.in(0));
  const bool typed = dt == C2::DOUBLE || dt == C2::INT8 || dt == C2::INT16 || dt == C2::INT32 || dt == C2::INT64 ||
                     dt == C2::UINT8 || dt == C2::UINT16 || dt == C2::UINT32 || dt == C2::UINT64;
  if (dt != C2::UNDEFINED && dt != C2::FLOAT && !typed)
    c.Refuse("only float32/64 and integer inputs are supported");
  const bool largest = c.Int("largest", 1) != 0;
  const bool negate = !largest && !typed;
  std::string x = c.in(0);
  if (negate) c.Emit("Negative", {c.in(0)}, {x = c.Fresh(c.out(0) + "_negated")});
  const std::string vals = negate ? c.Fresh(c.out(0) + "_negated_values") : c.out(0);
  const std::string idx = c.has_out(1) ? c.out(1) : c.Fresh(c.out(0) + "_indices");
  std::vector<std::string> ins{x};
  if (c.opset() >= 10) ins.push_back(c.in(1));
  auto& op = c.Emit("TopK", ins, {vals, idx});
  AddArg(op, "axis", c.Int("axis", -1));
  if (c.opset() < 10) AddArg(op, "k", c.Int("k", -1));
  if (typed && !largest) AddArg(op, "largest", int64_t{0});
  if (negate) c.Emit("Negative", {vals}, {c.out(0)});
  const int rank = c.Rank(c.in(0));
  if (rank >= 0) c.SetRank(c.out(0), rank), c.SetRank(idx, rank);
}

// Hardmax (opset 13): one-hot of the first maximum along `axis`, as EQ(ArgMax, iota) cast back to
// float; the axis's length must be known at import time.
void Hardmax(ConvertContext& c) {
  const auto dt = c.Dtype(c.in(0));
  if (dt != caffe2::TensorProto::UNDEFINED && dt != caffe2::TensorProto::FLOAT)
    c.Refuse("only float32 inputs are supported");
  const auto* d = c.Dims(c.in(0));
  if (!d) c.Refuse("the input's shape must be declared by the model");
  const int rank = static_cast<int>(d->size());
  const int64_t axis = c.Axis(c.Int("axis", -1), rank, "axis");
  const int64_t n = (*d)[axis];
  if (n < 1 || n > (int64_t{1} << 24))
    c.Refuse("the length of the axis must be known at import time (and at most 2^24)");
  const std::string am = c.Fresh(c.out(0) + "_argmax"), hot = c.Fresh(c.out(0) + "_hot");
  auto& op = c.Emit("ArgMax", {c.in(0)}, {am});
  AddArg(op, "axis", axis);
  AddArg(op, "keepdims", int64_t{1});
  ConstTensor iota;
  iota.dtype = caffe2::TensorProto::INT64;
  iota.dims.assign(rank - axis, 1);
  iota.dims[0] = n;
  for (int64_t i = 0; i < n; ++i) iota.integer.push_back(i);
  c.Emit("EQ", {am, c.AddConst(c.out(0) + "_iota", std::move(iota))}, {hot});
  AddArg(c.Emit("Cast", {hot}, {c.out(0)}), "to", static_cast<int64_t>(caffe2::TensorProto::FLOAT));
  c.SameDims(c.out(0), c.in(0));
}

// Trilu: x where (col - row) >= k (upper) or <= k (lower), else 0; the last two dims must be known,
// k (input 1, default 0) may be a runtime input.
void Trilu(ConvertContext& c) {
  const auto* d = c.Dims(c.in(0));
  if (!d || d->size() < 2) c.Refuse("the input's shape (rank 2 or more) must be declared by the model");
  const int64_t rows = (*d)[d->size() - 2], cols = (*d)[d->size() - 1];
  if (rows < 0 || cols < 0 || (cols > 0 && rows > (int64_t{1} << 24) / cols))
    c.Refuse("the last two dims must be known at import time (at most 2^24 elements)");
  const auto dt = c.Dtype(c.in(0));
  ConstTensor zero;
  zero.dtype = dt;
  if (dt == caffe2::TensorProto::FLOAT || dt == caffe2::TensorProto::DOUBLE) zero.real = {0.0};
  else if (dt == caffe2::TensorProto::INT64 || dt == caffe2::TensorProto::INT32) zero.integer = {0};
  else c.Refuse("only float, double, int32 and int64 inputs are supported");
  ConstTensor diff;  // col - row, [rows, cols]
  diff.dtype = caffe2::TensorProto::INT64;
  diff.dims = {rows, cols};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) diff.integer.push_back(j - i);
  std::string k;
  if (c.has_in(1)) {
    k = c.in(1);
  } else {
    ConstTensor k0;
    k0.dtype = caffe2::TensorProto::INT64;
    k0.integer = {0};
    k = c.AddConst(c.out(0) + "_k", std::move(k0));
  }
  const std::string keep = c.Fresh(c.out(0) + "_keep");
  c.Emit(c.Int("upper", 1) != 0 ? "GE" : "LE", {c.AddConst(c.out(0) + "_diagonal", std::move(diff)), k}, {keep});
  c.Emit("Where", {keep, c.in(0), c.AddConst(c.out(0) + "_zero", std::move(zero))}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
}

void ConstantOfShape(ConvertContext& c) {
  ConstTensor value = ConstTensor::Float({1}, {0.0});
  if (const auto* a = c.Attr("value")) value = ConstFromOnnx(a->t(), "", c.out(0) + " value");
  if (value.numel() != 1) HN_THROW(kInvalidArgument, "ConstantOfShape: value must have one element");
  if (value.dtype == caffe2::TensorProto::STRING) c.Refuse("string values are not supported");
  if (const ConstTensor* shape = c.Const(c.in(0))) {  // folded
    ConstTensor out = value;
    out.dims = shape->Ints("the shape");
    int64_t n = 1;
    for (int64_t d : out.dims) {
      if (d < 0) HN_THROW(kInvalidArgument, "ConstantOfShape: negative dim ", d, " in the shape");
      n = d == 0 || n == 0 ? 0 : (n > (int64_t{1} << 20) / d ? -1 : n * d);
      if (n < 0) break;
    }
    if (n >= 0) {  // small enough to fold (at most 2^20 elements); larger ones are filled at run time
      if (out.is_real()) out.real.assign(n, value.real[0]);
      else out.integer.assign(n, value.integer[0]);
      c.DefineConst(c.out(0), std::move(out));
      return;
    }
  }
  auto& op = c.Emit("ConstantFill", {c.in(0)}, {c.out(0)});
  AddArg(op, "input_as_shape", int64_t{1});
  AddArg(op, "dtype", static_cast<int64_t>(value.dtype));
  if (value.is_real()) AddArgF(op, "value", static_cast<float>(value.real[0]));
  else AddArg(op, "value", value.integer[0]);
}

// Range(start, limit, delta): computed at import when its inputs are constants, else our Range
// operator (CPU) at run time.
void Range(ConvertContext& c) {
  if (!c.Const(c.in(0)) || !c.Const(c.in(1)) || !c.Const(c.in(2))) {
    c.Emit("Range", {c.in(0), c.in(1), c.in(2)}, {c.out(0)});
    c.SetRank(c.out(0), 1);
    return;
  }
  const ConstTensor& s = *c.Const(c.in(0));
  const ConstTensor& l = *c.Const(c.in(1));
  const ConstTensor& d = *c.Const(c.in(2));
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) HN_THROW(kInvalidArgument, "Range: inputs must be scalars");
  const double start = s.Reals()[0], limit = l.Reals()[0], delta = d.Reals()[0];
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    HN_THROW(kInvalidArgument, "Range: delta must be non-zero and the inputs finite");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > double(int64_t{1} << 24)) c.Refuse("more than 2^24 elements");
  ConstTensor out;
  out.dtype = s.dtype;
  out.dims = {static_cast<int64_t>(count)};
  for (int64_t i = 0; i < out.dims[0]; ++i) {
    if (s.is_real()) out.real.push_back(start + i * delta);
    else out.integer.push_back(s.integer[0] + i * d.integer[0]);
  }
  c.DefineConst(c.out(0), std::move(out));
}

}  // namespace

void RegisterIndexConverters(ConverterRegistry& r);  // convert_index.cc

void RegisterShapeConverters(ConverterRegistry& r) {
  RegisterIndexConverters(r);
  r.Add("Range", Range);
  r.Add("Size", [](ConvertContext& c) {  // from dims the model fixes (or constants)
    const auto* d = c.Dims(c.in(0));
    if (!d || std::count(d->begin(), d->end(), -1)) c.Refuse("the input's dims are not known at import time");
    int64_t n = 1;
    for (int64_t x : *d) n *= x;
    ConstTensor k;
    k.dtype = caffe2::TensorProto::INT64;
    k.integer = {n};
    c.DefineConst(c.out(0), std::move(k));
  });
  r.Add("Shape", Shape);
  r.Add("Gather", Gather);
  r.Add("GatherElements", [](ConvertContext& c) {  // hetnet's GatherElements follows ONNX
    AddArg(c.Emit("GatherElements", {c.in(0), c.in(1)}, {c.out(0)}), "axis", c.Int("axis", 0));
    c.SameDims(c.out(0), c.in(1));
  });
  r.Add("Slice", Slice);
  r.Add("Expand", [](ConvertContext& c) {
    c.Emit("Expand", {c.in(0), c.in(1)}, {c.out(0)});
    const ConstTensor* s = c.Const(c.in(1));
    if (s && c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), std::max<int>(c.Rank(c.in(0)), static_cast<int>(s->numel())));
  });
  r.Add("Where", [](ConvertContext& c) { c.Emit("Where", {c.in(0), c.in(1), c.in(2)}, {c.out(0)}); });
  r.Add("ArgMax", [](ConvertContext& c) { ArgMinMax(c, "ArgMax"); });
  r.Add("ArgMin", [](ConvertContext& c) { ArgMinMax(c, "ArgMin"); });
  r.Add("ConstantOfShape", ConstantOfShape);
  r.Add("TopK", TopK);
  r.Add("Trilu", Trilu);
  r.Add("Hardmax", 13, kNewestOpset, Hardmax);
}

}  // namespace hetnet::onnxio
