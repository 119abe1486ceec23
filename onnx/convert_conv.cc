// Converters of convolution and pooling: Conv, ConvInteger, QLinearConv, ConvTranspose, MaxPool, AveragePool,
// LpPool, GlobalAveragePool, GlobalMaxPool, MaxUnpool (the CPU OnnxMaxUnpool). Our operators are 2-D NCHW: a 1-D
// node runs as 2-D on [N, C, L, 1]
// (ExpandDims before, Squeeze after; a 1-D weight gets a trailing 1); 3-D Conv runs as the CPU
// OnnxConv, 3-D ConvTranspose as our ConvTranspose's N-D form (CPU only), pools of the forms they
// lack (3-D, dilations, ...) and LpPool as the CPU OnnxPool. auto_pad SAME_*
// becomes explicit pads where the input's spatial dims are known (else SAME_UPPER without dilation
// is our legacy_pad SAME); ConvTranspose's output_shape becomes pads the same way.
#include <algorithm>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

// Per spatial dim: kernel, strides, dilations; pads [begins..., ends...]; ONNX's attribute order.
struct Geometry {
  std::vector<int64_t> kernel, strides, dilations, pads, output_padding, in;  // in: -1 unknown
  bool lifted = false;       // a 1-D node run as 2-D
  bool legacy_same = false;  // SAME_UPPER left to our legacy_pad SAME (input dims unknown)
};

Geometry ReadGeometry(ConvertContext& c, bool has_weight, bool transpose, const std::string& type) {
  Geometry g;
  const auto* w = has_weight ? c.Dims(c.in(1)) : nullptr;
  if (c.Has("kernel_shape")) g.kernel = c.Ints("kernel_shape");
  else if (w && w->size() >= 3) g.kernel.assign(w->begin() + 2, w->end());
  const int rank = static_cast<int>(g.kernel.size());
  if (g.kernel.empty()) c.Refuse("the kernel size is unknown (give kernel_shape or a constant weight)");
  if (rank > 2 && !transpose) c.Refuse(std::to_string(rank) + "-D (only 1-D and 2-D NCHW are supported)");
  auto read = [&](const char* name, size_t n, int64_t def) {
    std::vector<int64_t> v = c.Has(name) ? c.Ints(name) : std::vector<int64_t>(n, def);
    if (v.size() != n) HN_THROW(kInvalidArgument, c.op_type(), ": ", name, " has ", v.size(), " values for ", n);
    return v;
  };
  g.strides = read("strides", rank, 1);
  g.dilations = read("dilations", rank, 1);
  g.pads = read("pads", 2 * rank, 0);
  g.output_padding = read("output_padding", rank, 0);
  for (int64_t d : g.dilations)
    if (d != 1 && !has_weight) c.Refuse("dilations other than 1 are not supported by " + type);
  const auto* x = c.Dims(c.in(0));
  if (x && x->size() != static_cast<size_t>(rank) + 2)
    HN_THROW(kInvalidArgument, c.op_type(), ": input '", c.in(0), "' has rank ", x->size(), " for a ", rank, "-D kernel");
  for (int i = 0; i < rank; ++i) g.in.push_back(x ? (*x)[i + 2] : -1);
  if (rank == 1) {  // [L] -> [L, 1]
    g.lifted = true;
    g.kernel.push_back(1), g.strides.push_back(1), g.dilations.push_back(1), g.output_padding.push_back(0);
    g.pads = {g.pads[0], 0, g.pads[1], 0};
    g.in.push_back(1);
  }

  const size_t nd = g.kernel.size();  // spatial dims of the emitted op
  const std::string auto_pad = c.Str("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  const bool explicit_out = transpose && c.Has("output_shape");
  if (auto_pad == "VALID") {
    std::fill(g.pads.begin(), g.pads.end(), 0);
  } else if (same || explicit_out) {
    const bool known = std::count(g.in.begin(), g.in.end(), -1) == 0;
    if (!known) {
      if (auto_pad == "SAME_UPPER" && !transpose && nd == 2 &&
          std::count(g.dilations.begin(), g.dilations.end(), 1) == 2) {
        g.legacy_same = true;
        return g;
      }
      c.Refuse((explicit_out ? std::string("output_shape") : "auto_pad " + auto_pad) +
               " needs the input's spatial dims, which the model does not declare");
    }
    std::vector<int64_t> out_shape = explicit_out ? c.Ints("output_shape") : std::vector<int64_t>{};
    if (explicit_out && out_shape.size() + (g.lifted ? 1 : 0) != nd)
      HN_THROW(kInvalidArgument, c.op_type(), ": output_shape has ", out_shape.size(), " values");
    if (g.lifted && explicit_out) out_shape.push_back(-1);
    for (size_t i = 0; i < nd; ++i) {
      const int64_t dk = g.dilations[i] * (g.kernel[i] - 1) + 1, s = g.strides[i], in = g.in[i];
      int64_t total;
      if (transpose) {
        const int64_t target = explicit_out && out_shape[i] >= 0 ? out_shape[i] : in * s;
        total = s * (in - 1) + g.output_padding[i] + dk - target;
      } else {
        total = std::max<int64_t>(0, ((in + s - 1) / s - 1) * s + dk - in);
      }
      if (g.lifted && i == 1) total = 0;
      if (transpose && total < 0) {  // a larger output than the pads give: extra output padding
        g.output_padding[i] -= total;
        total = 0;
        if (g.output_padding[i] >= g.strides[i]) c.Refuse("output_shape needs output padding >= the stride");
      }
      if (total < 0) c.Refuse("the requested output size needs negative padding");
      const bool upper = auto_pad == "SAME_UPPER";
      g.pads[i] = upper ? total / 2 : total - total / 2;
      g.pads[i + nd] = total - g.pads[i];
    }
  } else if (auto_pad != "NOTSET") {
    HN_THROW(kInvalidArgument, c.op_type(), ": unknown auto_pad '", auto_pad, "'");
  }
  return g;
}

void AddGeometryArgs(caffe2::OperatorDef& op, const Geometry& g, bool transpose) {
  AddArg(op, "kernels", g.kernel);
  AddArg(op, "strides", g.strides);
  const bool dilated = std::count(g.dilations.begin(), g.dilations.end(), 1) != static_cast<long>(g.dilations.size());
  if (op.type() == "Conv" || dilated)
    AddArg(op, "dilations", g.dilations);
  if (g.legacy_same) AddArg(op, "legacy_pad", int64_t{2});
  else AddArg(op, "pads", g.pads);
  if (transpose) AddArg(op, "adjs", g.output_padding);
}

// X as the op's 4-D input (lifted: ExpandDims at 3) and the op's output name (lifted: a fresh blob
// squeezed into the node's output afterwards by FinishLift).
std::pair<std::string, std::string> Lift(ConvertContext& c, const Geometry& g) {
  if (!g.lifted) return {c.in(0), c.out(0)};
  const std::string x4 = c.Fresh(c.in(0) + "_2d");
  AddArg(c.Emit("ExpandDims", {c.in(0)}, {x4}), "dims", std::vector<int64_t>{3});
  return {x4, c.Fresh(c.out(0) + "_2d")};
}

void FinishLift(ConvertContext& c, const Geometry& g, const std::string& y4) {
  if (g.lifted) AddArg(c.Emit("Squeeze", {y4}, {c.out(0)}), "dims", std::vector<int64_t>{3});
  // (a global pool's geometry has no kernel)
  c.SetRank(c.out(0), g.lifted ? 3 : g.kernel.size() > 2 ? static_cast<int>(g.kernel.size()) + 2 : 4);
}

void Conv(ConvertContext& c, bool transpose) {
  const std::string type = transpose ? "ConvTranspose" : "Conv";
  const Geometry g = ReadGeometry(c, true, transpose, type);
  const auto [x, y] = Lift(c, g);
  std::string w = c.in(1);
  if (g.lifted) {  // weight [M, C, k] -> [M, C, k, 1]
    if (const ConstTensor* k = c.Const(c.in(1))) {
      ConstTensor w4 = *k;
      w4.dims.push_back(1);
      w = c.AddConst(c.in(1) + "_2d", std::move(w4));
    } else {
      w = c.Fresh(c.in(1) + "_2d");
      AddArg(c.Emit("ExpandDims", {c.in(1)}, {w}), "dims", std::vector<int64_t>{3});
    }
  }
  std::vector<std::string> ins = {x, w};
  if (c.has_in(2)) ins.push_back(c.in(2));
  auto& op = c.Emit(type, ins, {y});
  if (!c.has_in(2)) AddArg(op, "no_bias", int64_t{1});
  AddGeometryArgs(op, g, transpose);
  const int64_t group = c.Int("group", 1);
  if (group != 1) AddArg(op, "group", group);
  FinishLift(c, g, y);
}

void Pool(ConvertContext& c, const std::string& type) {
  if (c.has_out(1)) c.Refuse("the Indices output is not supported");
  Geometry g = ReadGeometry(c, false, false, type);
  const bool include_pad = c.Int("count_include_pad", 0) != 0;
  const bool ceil = c.Int("ceil_mode", 0) != 0;
  if (ceil) {
    // Caffe's ceil mode (legacy_pad 3) equals ONNX's for symmetric pads and kernel >= stride.
    if (c.Str("auto_pad", "NOTSET") != "NOTSET") c.Refuse("ceil_mode=1 with auto_pad is not supported");
    if (include_pad) c.Refuse("ceil_mode=1 with count_include_pad=1 is not supported");
    if (g.pads[0] != g.pads[2] || g.pads[1] != g.pads[3]) c.Refuse("ceil_mode=1 with asymmetric pads is not supported");
    for (int i = 0; i < 2; ++i)
      if (g.kernel[i] < g.strides[i]) c.Refuse("ceil_mode=1 with a kernel smaller than the stride is not supported");
  }
  const auto [x, y] = Lift(c, g);
  auto& op = c.Emit(type, {x}, {y});
  AddGeometryArgs(op, g, false);
  if (type == "AveragePool" && include_pad) AddArg(op, "count_include_pad", int64_t{1});
  if (ceil) AddArg(op, "legacy_pad", int64_t{3});
  FinishLift(c, g, y);
}

// The forms our 2-D NCHW float32 pools lack go to the CPU OnnxPool (every ONNX form): more than 2
// spatial dims, dilations, the Indices output or storage_order, a non-float32 input, and the
// ceil_mode cases Caffe's ceil mode does not match.
bool NeedsOnnxPool(ConvertContext& c) {
  const auto k = c.Ints("kernel_shape");
  const auto dt = c.Dtype(c.in(0));
  bool generic = k.size() > 2 || c.has_out(1) || c.Int("storage_order", 0) != 0 ||
                 (dt != caffe2::TensorProto::FLOAT && dt != caffe2::TensorProto::UNDEFINED);
  for (int64_t d : c.Ints("dilations")) generic |= d != 1;
  if (c.Int("ceil_mode", 0) != 0) {
    const auto s = c.Ints("strides"), p = c.Ints("pads");
    generic |= c.Str("auto_pad", "NOTSET") != "NOTSET" || c.Int("count_include_pad", 0) != 0;
    for (size_t i = 0; i < p.size() / 2; ++i) generic |= p[i] != p[i + p.size() / 2];
    for (size_t i = 0; i < k.size() && i < s.size(); ++i) generic |= k[i] < s[i];
  }
  return generic;
}

void OnnxPool(ConvertContext& c, const std::string& mode) {
  if (!c.Has("kernel_shape")) HN_THROW(kInvalidArgument, c.op_type(), ": attribute kernel_shape is required");
  std::vector<std::string> outs{c.out(0)};
  if (c.has_out(1)) outs.push_back(c.out(1));
  auto& op = c.Emit("OnnxPool", {c.in(0)}, outs);
  AddArg(op, "mode", mode);
  for (const char* a : {"kernel_shape", "strides", "dilations", "pads"})
    if (c.Has(a)) AddArg(op, a, c.Ints(a));
  for (const char* a : {"ceil_mode", "count_include_pad", "storage_order"})
    if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
  if (c.Has("auto_pad")) AddArg(op, "auto_pad", c.Str("auto_pad", "NOTSET"));
  if (mode == "lp") {  // an int since opset 2, a float before
    const auto* a = c.Attr("p");
    AddArgF(op, "p", !a ? 2.f : a->type() == onnx::AttributeProto::FLOAT ? a->f() : static_cast<float>(a->i()));
  }
  for (const auto& o : outs) c.SetRank(o, c.Rank(c.in(0)));
}

void GlobalPool(ConvertContext& c, const std::string& type) {
  const int rank = c.Rank(c.in(0));
  if (rank >= 0 && rank != 3 && rank != 4) c.Refuse("input rank " + std::to_string(rank) + " (only 3-D and 4-D NCHW)");
  Geometry g;
  g.lifted = rank == 3;
  const auto [x, y] = Lift(c, g);
  AddArg(c.Emit(type, {x}, {y}), "global_pooling", int64_t{1});
  FinishLift(c, g, y);
}

// name Cast to `to` (a fresh blob).
std::string CastTo(ConvertContext& c, const std::string& name, caffe2::TensorProto::DataType to) {
  const std::string out = c.Fresh(name + "_as_" + std::to_string(static_cast<int>(to)));
  AddArg(c.Emit("Cast", {name}, {out}), "to", static_cast<int64_t>(to));
  return out;
}

// name reshaped to [-1, 1, ...] of `dims` dims (a per-channel vector or one value, broadcast along dim 0).
std::string PerRow(ConvertContext& c, const std::string& name, int dims) {
  const std::string rows = c.Fresh(name + "_rows");
  std::vector<int64_t> shape(dims, 1);
  shape[0] = -1;
  AddArg(c.Emit("Reshape", {name}, {rows, c.Fresh(rows + "_old_shape")}), "shape", shape);
  return rows;
}

// ConvInteger-10 and QLinearConv-10, as ONNX defines them: Conv(x - x_zero_point, w - w_zero_point) with zero
// padding (+ an int32 bias B), run exactly in float64 (sums of int8 / uint8 products stay far below 2^53) by the CPU
// OnnxConv. A weight zero point or scale (one value or one per output channel [M]) is reshaped to [-1, 1, ...] so
// that it broadcasts over w's rows / y's channels. Returns the float64 result blob.
std::string IntegerConvF64(ConvertContext& c, int x, int x_zp, int w, int w_zp, int bias) {
  const auto* wd = c.Dims(c.in(w));
  const int rank = c.Has("kernel_shape") ? static_cast<int>(c.Ints("kernel_shape").size())
                   : wd && wd->size() >= 3 ? static_cast<int>(wd->size()) - 2
                                           : -1;
  if (rank < 1) c.Refuse("the kernel rank is unknown (give kernel_shape or a weight of known rank)");
  const std::string y = c.Fresh(c.out(0) + "_f64");
  auto minus_zero_point = [&c, rank](int value, int zp, bool per_row) {
    std::string v = CastTo(c, c.in(value), caffe2::TensorProto::DOUBLE);
    if (!c.has_in(zp)) return v;
    const std::string z = CastTo(c, c.in(zp), caffe2::TensorProto::DOUBLE), d = c.Fresh(v + "_minus_zp");
    c.Emit("Sub", {v, per_row ? PerRow(c, z, rank + 2) : z}, {d});
    return d;
  };
  std::vector<std::string> ins{minus_zero_point(x, x_zp, false), minus_zero_point(w, w_zp, true)};
  if (bias >= 0 && c.has_in(bias)) ins.push_back(CastTo(c, c.in(bias), caffe2::TensorProto::DOUBLE));
  auto& op = c.Emit("OnnxConv", ins, {y});
  for (const char* a : {"kernel_shape", "strides", "dilations", "pads"})
    if (c.Has(a)) AddArg(op, a, c.Ints(a));
  if (c.Has("group")) AddArg(op, "group", c.Int("group", 1));
  if (c.Has("auto_pad")) AddArg(op, "auto_pad", c.Str("auto_pad", "NOTSET"));
  c.SetRank(y, rank + 2);
  return y;
}

void ConvInteger(ConvertContext& c) {
  const std::string y = IntegerConvF64(c, 0, 2, 1, 3, -1);
  AddArg(c.Emit("Cast", {y}, {c.out(0)}), "to", static_cast<int64_t>(caffe2::TensorProto::INT32));
  c.SetRank(c.out(0), c.Rank(y));
}

// QLinearConv-10 as ONNX's reference computes it: R = conv * float32(float32(x_scale * w_scale) / y_scale) in float64,
// + y_zero_point, rounded half to even, saturated to y_zero_point's dtype (int8 / uint8).
void QLinearConv(ConvertContext& c) {
  for (int i = 0; i < 8; ++i)
    if (!c.has_in(i)) c.Refuse("inputs 0-7 are required");
  const auto yt = c.Dtype(c.in(7));
  if (yt != caffe2::TensorProto::UINT8 && yt != caffe2::TensorProto::INT8)
    c.Refuse("y_zero_point must be an int8 or uint8 tensor of known type");
  const std::string conv = IntegerConvF64(c, 0, 2, 3, 5, 8);
  const int rank = c.Rank(conv);
  const std::string xw = c.Fresh(c.out(0) + "_xw_scale"), mult = c.Fresh(c.out(0) + "_multiplier");
  c.Emit("Mul", {c.in(1), c.in(4)}, {xw});  // float32, as the reference's numpy
  c.Emit("Div", {xw, c.in(6)}, {mult});
  // Channels of y [N, M, ...] are its dim 1: [M] -> [M, 1, ...] of rank - 1 dims.
  const std::string scaled = c.Fresh(c.out(0) + "_scaled"), shifted = c.Fresh(c.out(0) + "_shifted");
  c.Emit("Mul", {conv, PerRow(c, CastTo(c, mult, caffe2::TensorProto::DOUBLE), rank - 1)}, {scaled});
  c.Emit("Add", {scaled, CastTo(c, c.in(7), caffe2::TensorProto::DOUBLE)}, {shifted});
  const std::string rounded = c.Fresh(c.out(0) + "_rounded"), clipped = c.Fresh(c.out(0) + "_clipped");
  c.Emit("Round", {shifted}, {rounded});
  // Saturation on float32 (exact: whole numbers, and any beyond 2^24 clip anyway), then the narrow cast.
  auto& clip = c.Emit("Clip", {CastTo(c, rounded, caffe2::TensorProto::FLOAT)}, {clipped});
  AddArgF(clip, "min", yt == caffe2::TensorProto::INT8 ? -128.f : 0.f);
  AddArgF(clip, "max", yt == caffe2::TensorProto::INT8 ? 127.f : 255.f);
  AddArg(c.Emit("Cast", {clipped}, {c.out(0)}), "to", static_cast<int64_t>(yt));
  c.SetRank(c.out(0), rank);
}

}  // namespace

void RegisterConvConverters(ConverterRegistry& r) {
  r.Add("ConvInteger", 10, kNewestOpset, ConvInteger);
  r.Add("QLinearConv", 10, kNewestOpset, QLinearConv);
  r.Add("MaxUnpool", 9, kNewestOpset, [](ConvertContext& c) {  // operators/onnx_max_unpool_op
    if (!c.Has("kernel_shape")) HN_THROW(kInvalidArgument, c.op_type(), ": attribute kernel_shape is required");
    std::vector<std::string> ins{c.in(0), c.in(1)};
    if (c.num_inputs() > 2 && c.has_in(2)) ins.push_back(c.in(2));
    auto& op = c.Emit("OnnxMaxUnpool", ins, {c.out(0)});
    for (const char* a : {"kernel_shape", "strides", "pads"})
      if (c.Has(a)) AddArg(op, a, c.Ints(a));
    if (const int rank = c.Rank(c.in(0)); rank >= 0) c.SetRank(c.out(0), rank);
  });
  r.Add("Conv", [](ConvertContext& c) {
    const auto* w = c.Dims(c.in(1));
    const size_t rank = c.Has("kernel_shape") ? c.Ints("kernel_shape").size() : w && w->size() >= 2 ? w->size() - 2 : 0;
    if (rank <= 2) return Conv(c, false);
    // 3-D and up: the CPU OnnxConv with ONNX's attributes.
    std::vector<std::string> ins{c.in(0), c.in(1)};
    if (c.has_in(2)) ins.push_back(c.in(2));
    auto& op = c.Emit("OnnxConv", ins, {c.out(0)});
    for (const char* a : {"kernel_shape", "strides", "dilations", "pads"})
      if (c.Has(a)) AddArg(op, a, c.Ints(a));
    if (c.Has("group")) AddArg(op, "group", c.Int("group", 1));
    if (c.Has("auto_pad")) AddArg(op, "auto_pad", c.Str("auto_pad", "NOTSET"));
    c.SetRank(c.out(0), static_cast<int>(rank) + 2);
  });
  r.Add("ConvTranspose", [](ConvertContext& c) { Conv(c, true); });
  r.Add("MaxPool", [](ConvertContext& c) { NeedsOnnxPool(c) ? OnnxPool(c, "max") : Pool(c, "MaxPool"); });
  r.Add("AveragePool", [](ConvertContext& c) { NeedsOnnxPool(c) ? OnnxPool(c, "avg") : Pool(c, "AveragePool"); });
  r.Add("LpPool", [](ConvertContext& c) { OnnxPool(c, "lp"); });
  r.Add("GlobalAveragePool", [](ConvertContext& c) { GlobalPool(c, "AveragePool"); });
  r.Add("GlobalMaxPool", [](ConvertContext& c) { GlobalPool(c, "MaxPool"); });
}

}  // namespace hetnet::onnxio
