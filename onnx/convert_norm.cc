// Normalizations composed from reductions and broadcasting arithmetic: LayerNormalization (opset 17)
// and RMSNormalization (opset 23), over the axes from `axis` to the last; InstanceNormalization (over
// the spatial axes, per-channel scale and bias); GroupNormalization (opset 21); LpNormalization (p = 1
// or 2 along one axis); MeanVarianceNormalization. float32.
#include <algorithm>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

// Axes [axis, rank) as negative axes (so an unknown rank works when axis < 0).
std::vector<int64_t> TrailingAxes(ConvertContext& c, int64_t axis) {
  const int rank = c.Rank(c.in(0));
  c.Axis(axis, std::max(rank, 64), "axis");  // bounded before it sizes anything
  if (axis >= 0) {
    if (rank < 0) c.Refuse("a non-negative axis needs the input's rank, which the model does not declare");
    axis -= rank;
  }
  if (axis >= 0) HN_THROW(kInvalidArgument, c.op_type(), ": axis out of range for rank ", rank);
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  return axes;
}

std::string Reduced(ConvertContext& c, const std::string& type, const std::string& x, const std::vector<int64_t>& axes,
                    const std::string& hint) {
  const std::string y = c.Fresh(c.out(0) + "_" + hint);
  auto& op = c.Emit(type, {x}, {y});
  AddArg(op, "axes", axes);
  AddArg(op, "keepdims", int64_t{1});
  return y;
}

// x * (ms + epsilon)^-1/2 * scale (+ bias), ms a mean over the axes (of d^2).
// Returns the inverse standard deviation's blob.
std::string Normalize(ConvertContext& c, const std::string& d, const std::string& ms, const std::string& scale,
                      const std::string& bias) {
  const std::string eps = c.AddConst(c.out(0) + "_epsilon", ConstTensor::Float({}, {c.Float("epsilon", 1e-5f)}));
  const std::string var = c.Fresh(c.out(0) + "_var_eps"), inv = c.Fresh(c.out(0) + "_inv_std");
  c.Emit("Add", {ms, eps}, {var});
  AddArgF(c.Emit("Pow", {var}, {inv}), "exponent", -0.5f);
  const std::string normed = c.Fresh(c.out(0) + "_normed");
  c.Emit("Mul", {d, inv}, {normed});
  const std::string scaled = !bias.empty() ? c.Fresh(c.out(0) + "_scaled") : c.out(0);
  c.Emit("Mul", {normed, scale}, {scaled});
  if (!bias.empty()) c.Emit("Add", {scaled, bias}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
  return inv;
}

void LayerNorm(ConvertContext& c) {
  if (c.Int("stash_type", 1) != 1) c.Refuse("stash_type other than float is not supported");
  const auto axes = TrailingAxes(c, c.Int("axis", -1));
  const std::string mean = Reduced(c, "ReduceMean", c.in(0), axes, "mean");
  const std::string d = c.Fresh(c.out(0) + "_centered"), d2 = c.Fresh(c.out(0) + "_sq");
  c.Emit("Sub", {c.in(0), mean}, {d});
  c.Emit("Sqr", {d}, {d2});
  const std::string inv =
      Normalize(c, d, Reduced(c, "ReduceMean", d2, axes, "variance"), c.in(1), c.has_in(2) ? c.in(2) : "");
  // The optional Mean and InvStdDev outputs (keepdims shape).
  if (c.num_outputs() > 1 && c.has_out(1)) c.Emit("StopGradient", {mean}, {c.out(1)});
  if (c.num_outputs() > 2 && c.has_out(2)) c.Emit("StopGradient", {inv}, {c.out(2)});
}

void RmsNorm(ConvertContext& c) {
  if (c.Int("stash_type", 1) != 1) c.Refuse("stash_type other than float is not supported");
  const auto axes = TrailingAxes(c, c.Int("axis", -1));
  const std::string x2 = c.Fresh(c.out(0) + "_sq");
  c.Emit("Sqr", {c.in(0)}, {x2});
  Normalize(c, c.in(0), Reduced(c, "ReduceMean", x2, axes, "mean_square"), c.in(1), "");
}

// (x - mean) / sqrt(var + epsilon) * scale + bias, statistics over the axes after N and C; the [C]
// scale and bias broadcast as [C, 1, ..., 1].
void InstanceNorm(ConvertContext& c) {
  const int rank = c.Rank(c.in(0));
  if (rank < 3) c.Refuse("the input's rank (at least 3) must be declared by the model");
  std::vector<int64_t> axes, trailing;
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a), trailing.push_back(a - 1);
  auto per_channel = [&](int i, const char* hint) {
    const std::string y = c.Fresh(c.out(0) + "_" + hint);
    AddArg(c.Emit("ExpandDims", {c.in(i)}, {y}), "dims", trailing);
    return y;
  };
  const std::string mean = Reduced(c, "ReduceMean", c.in(0), axes, "mean");
  const std::string d = c.Fresh(c.out(0) + "_centered"), d2 = c.Fresh(c.out(0) + "_sq");
  c.Emit("Sub", {c.in(0), mean}, {d});
  c.Emit("Sqr", {d}, {d2});
  Normalize(c, d, Reduced(c, "ReduceMean", d2, axes, "variance"), per_channel(1, "scale"), per_channel(2, "bias"));
}

// GroupNormalization (opset 21, per-channel scale and bias): statistics over [N, G, C/G * spatial],
// then back to x's shape and the [C] scale and bias broadcast as [C, 1, ..., 1].
void GroupNorm(ConvertContext& c) {
  if (c.Int("stash_type", 1) != 1) c.Refuse("stash_type other than float is not supported");
  const int rank = c.Rank(c.in(0));
  if (rank < 3) c.Refuse("the input's rank (at least 3) must be declared by the model");
  const int64_t groups = c.Int("num_groups", 0);
  if (groups < 1 || groups > (int64_t{1} << 24))
    HN_THROW(kInvalidArgument, "GroupNormalization: num_groups must be in [1, 2^24], got ", groups);
  const std::string grouped = c.Fresh(c.out(0) + "_grouped"), shape = c.Fresh(c.out(0) + "_shape");
  AddArg(c.Emit("Reshape", {c.in(0)}, {grouped, c.Fresh(c.out(0) + "_old_shape")}), "shape",
         std::vector<int64_t>{0, groups, -1});
  const std::string mean = Reduced(c, "ReduceMean", grouped, {2}, "mean");
  const std::string d = c.Fresh(c.out(0) + "_centered"), d2 = c.Fresh(c.out(0) + "_sq");
  c.Emit("Sub", {grouped, mean}, {d});
  c.Emit("Sqr", {d}, {d2});
  const std::string var = c.Fresh(c.out(0) + "_var_eps"), inv = c.Fresh(c.out(0) + "_inv_std");
  const std::string eps = c.AddConst(c.out(0) + "_epsilon", ConstTensor::Float({}, {c.Float("epsilon", 1e-5f)}));
  c.Emit("Add", {Reduced(c, "ReduceMean", d2, {2}, "variance"), eps}, {var});
  AddArgF(c.Emit("Pow", {var}, {inv}), "exponent", -0.5f);
  const std::string normed = c.Fresh(c.out(0) + "_normed"), back = c.Fresh(c.out(0) + "_ungrouped");
  c.Emit("Mul", {d, inv}, {normed});
  c.Emit("Shape", {c.in(0)}, {shape});
  c.Emit("Reshape", {normed, shape}, {back, c.Fresh(c.out(0) + "_grouped_shape")});
  std::vector<int64_t> trailing;
  for (int64_t a = 2; a < rank; ++a) trailing.push_back(a - 1);
  const std::string scale = c.Fresh(c.out(0) + "_scale"), bias = c.Fresh(c.out(0) + "_bias"),
                    scaled = c.Fresh(c.out(0) + "_scaled");
  AddArg(c.Emit("ExpandDims", {c.in(1)}, {scale}), "dims", trailing);
  AddArg(c.Emit("ExpandDims", {c.in(2)}, {bias}), "dims", trailing);
  c.Emit("Mul", {back, scale}, {scaled});
  c.Emit("Add", {scaled, bias}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
}

// x / ||x||_p along `axis` (p = 1: sum of |x|; p = 2: sqrt of the sum of squares).
void LpNorm(ConvertContext& c) {
  const int64_t p = c.Int("p", 2);
  if (p != 1 && p != 2) c.Refuse("p must be 1 or 2");
  const auto dt = c.Dtype(c.in(0));
  if (dt != caffe2::TensorProto::UNDEFINED && dt != caffe2::TensorProto::FLOAT)
    c.Refuse("only float32 inputs are supported");
  const int rank = c.Rank(c.in(0));
  int64_t axis = c.Int("axis", -1);
  c.Axis(axis, std::max(rank, 64), "axis");
  if (axis >= 0 && rank < 0) c.Refuse("a non-negative axis needs the input's rank, which the model does not declare");
  if (axis < 0 && rank >= 0) axis += rank;
  const std::string m = c.Fresh(c.out(0) + (p == 1 ? "_abs" : "_sq"));
  c.Emit(p == 1 ? "Abs" : "Sqr", {c.in(0)}, {m});
  std::string norm = Reduced(c, "ReduceSum", m, {axis}, "sum");
  if (p == 2) {
    const std::string root = c.Fresh(c.out(0) + "_norm");
    c.Emit("Sqrt", {norm}, {root});
    norm = root;
  }
  // A zero norm (an all-zero slice) divides by 1 instead, so the result is 0, not 0/0 (ONNX's
  // reference); norm + (norm == 0) is exact wherever the norm is not 0.
  const std::string zero = c.AddConst(c.out(0) + "_zero", ConstTensor::Float({}, {0}));
  const std::string is_zero = c.Fresh(c.out(0) + "_norm_is_zero"), ones = c.Fresh(c.out(0) + "_norm_is_zero_f");
  const std::string safe = c.Fresh(c.out(0) + "_norm_safe");
  c.Emit("EQ", {norm, zero}, {is_zero});
  AddArg(c.Emit("Cast", {is_zero}, {ones}), "to", static_cast<int64_t>(caffe2::TensorProto::FLOAT));
  c.Emit("Add", {norm, ones}, {safe});
  c.Emit("Div", {c.in(0), safe}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
}

// MeanVarianceNormalization (opset 9/13) as ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), the
// means over `axes` (default [0, 2, 3]).
void MeanVarianceNorm(ConvertContext& c) {
  const auto axes = c.Has("axes") ? c.Ints("axes") : std::vector<int64_t>{0, 2, 3};
  const std::string mean = Reduced(c, "ReduceMean", c.in(0), axes, "mean");
  const std::string x2 = c.Fresh(c.out(0) + "_sq"), m2 = c.Fresh(c.out(0) + "_mean_sq");
  c.Emit("Sqr", {c.in(0)}, {x2});
  c.Emit("Sqr", {mean}, {m2});
  const std::string var = c.Fresh(c.out(0) + "_variance"), sd = c.Fresh(c.out(0) + "_std");
  c.Emit("Sub", {Reduced(c, "ReduceMean", x2, axes, "mean_of_sq"), m2}, {var});
  c.Emit("Sqrt", {var}, {sd});
  const std::string eps = c.AddConst(c.out(0) + "_epsilon", ConstTensor::Float({}, {1e-9}));
  const std::string sd_eps = c.Fresh(c.out(0) + "_std_eps"), d = c.Fresh(c.out(0) + "_centered");
  c.Emit("Add", {sd, eps}, {sd_eps});
  c.Emit("Sub", {c.in(0), mean}, {d});
  c.Emit("Div", {d, sd_eps}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
}

}  // namespace

void RegisterNormConverters(ConverterRegistry& r) {
  r.Add("MeanVarianceNormalization", MeanVarianceNorm);
  r.Add("LayerNormalization", LayerNorm);
  r.Add("RMSNormalization", RmsNorm);
  r.Add("InstanceNormalization", InstanceNorm);
  r.Add("LpNormalization", LpNorm);
  r.Add("GroupNormalization", 21, kNewestOpset, GroupNorm);
}

}  // namespace hetnet::onnxio
