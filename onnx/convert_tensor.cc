// Converters of the tensor-layout family: Constant, Reshape, Flatten, Concat, Split, Squeeze,
// Unsqueeze, Transpose, the reductions (ReduceSumSquare / L1 / L2 / LogSum over ReduceSum).
// Squeeze / Unsqueeze axes given as inputs (newer opsets) must be constants; negative axes need the
// input's rank (from the model's value infos or earlier nodes). Reduction axes may come at run time.
#include <algorithm>
#include <set>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

void Constant(ConvertContext& c) {
  ConstTensor v;
  if (const auto* a = c.Attr("value")) {
    v = ConstFromOnnx(a->t(), "", c.out(0));
  } else if (c.Has("value_float")) {
    v = ConstTensor::Float({}, {c.Float("value_float", 0.f)});
  } else if (c.Has("value_floats")) {
    const auto f = c.Floats("value_floats");
    v = ConstTensor::Float({static_cast<int64_t>(f.size())}, std::vector<double>(f.begin(), f.end()));
  } else if (c.Has("value_int") || c.Has("value_ints")) {
    v.dtype = caffe2::TensorProto::INT64;
    v.integer = c.Has("value_int") ? std::vector<int64_t>{c.Int("value_int", 0)} : c.Ints("value_ints");
    if (c.Has("value_ints")) v.dims = {static_cast<int64_t>(v.integer.size())};
  } else if (c.Has("value_string")) {
    v.dtype = caffe2::TensorProto::STRING;
    v.text = {c.Str("value_string", "")};
  } else {
    c.Refuse(c.Has("sparse_value") ? "sparse_value is not supported" : "no supported value attribute");
  }
  c.DefineConst(c.out(0), std::move(v));
}

// Axes from the attribute (before `input_opset`) or from optional constant input 1.
std::vector<int64_t> AxesOf(ConvertContext& c, int64_t input_opset, bool* given) {
  if (c.opset() < input_opset) {
    *given = c.Has("axes");
    return c.Ints("axes");
  }
  *given = c.has_in(1);
  return *given ? c.RequireConst(1, "axes").Ints("axes") : std::vector<int64_t>{};
}

std::vector<int64_t> Canonical(ConvertContext& c, std::vector<int64_t> axes, int rank) {
  for (auto& a : axes) a = c.Axis(a, rank, "axis");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    HN_THROW(kInvalidArgument, c.op_type(), ": repeated axis");
  return axes;
}

void Reshape(ConvertContext& c) {
  const std::string old_shape = c.Fresh(c.out(0) + "_old_shape");
  const bool allowzero = c.Int("allowzero", 0) != 0;
  std::vector<int64_t> shape;
  if (c.opset() < 5) {
    shape = c.Ints("shape");
  } else if (const ConstTensor* s = c.Const(c.in(1))) {
    shape = s->Ints("the shape");
  } else {
    auto& op = c.Emit("Reshape", {c.in(0), c.in(1)}, {c.out(0), old_shape});
    if (allowzero) AddArg(op, "allowzero", int64_t{1});
    return;
  }
  auto& op = c.Emit("Reshape", {c.in(0)}, {c.out(0), old_shape});
  AddArg(op, "shape", shape);
  if (allowzero && std::count(shape.begin(), shape.end(), 0)) AddArg(op, "allowzero", int64_t{1});
  const auto* in = c.Dims(c.in(0));
  std::vector<int64_t> d(shape.size(), -1);
  for (size_t i = 0; i < shape.size(); ++i)
    d[i] = shape[i] > 0 ? shape[i] : shape[i] == 0 && allowzero ? 0 : (shape[i] == 0 && in && i < in->size() ? (*in)[i] : -1);
  c.SetDims(c.out(0), d);
}

void Flatten(ConvertContext& c) {
  const int rank = c.Rank(c.in(0));
  int64_t axis = c.Int("axis", 1);
  if (axis < 0) axis = c.Axis(axis, rank, "axis");
  AddArg(c.Emit("Flatten", {c.in(0)}, {c.out(0)}), "axis", axis);
  c.SetRank(c.out(0), 2);
}

void Concat(ConvertContext& c) {
  std::vector<std::string> ins;
  for (int i = 0; i < c.num_inputs(); ++i)
    if (c.has_in(i)) ins.push_back(c.in(i));
  AddArg(c.Emit("Concat", ins, {c.out(0), c.Fresh(c.out(0) + "_split_info")}), "axis", c.Int("axis", 1));
  c.SetRank(c.out(0), ins.empty() ? -1 : c.Rank(ins[0]));
}

void Split(ConvertContext& c) {
  std::vector<std::string> outs;
  for (int i = 0; i < c.num_outputs(); ++i) outs.push_back(c.has_out(i) ? c.out(i) : c.Fresh("split_unused"));
  std::vector<int64_t> split;
  if (c.has_in(1) && !c.Const(c.in(1))) {  // sizes computed at run time: our Split's int32 input 1
    const std::string sizes = c.Fresh(c.out(0) + "_split_sizes");
    AddArg(c.Emit("Cast", {c.in(1)}, {sizes}), "to", static_cast<int64_t>(caffe2::TensorProto::INT32));
    AddArg(c.Emit("Split", {c.in(0), sizes}, outs), "axis", c.Int("axis", 0));
    for (const auto& o : outs) c.SetRank(o, c.Rank(c.in(0)));
    return;
  }
  if (c.has_in(1)) split = c.RequireConst(1, "split").Ints("split");  // opsets 1 and >= 13
  else if (c.opset() < 13) split = c.Ints("split");
  if (split.empty() && c.opset() >= 18 && c.Has("num_outputs")) {
    // num_outputs: equal parts of ceil(dim / n), the last one smaller (needs the dim when uneven).
    const auto* d = c.Dims(c.in(0));
    const int64_t n = static_cast<int64_t>(outs.size());
    const int64_t axis = c.Axis(c.Int("axis", 0), d ? static_cast<int>(d->size()) : -1, "axis");
    const int64_t dim = d ? (*d)[axis] : -1;
    if (dim >= 0 && n > 0 && dim % n != 0) {
      const int64_t part = (dim + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) split.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
    }
  }
  if (!split.empty() && split.size() != outs.size())
    HN_THROW(kInvalidArgument, "Split: ", split.size(), " sizes for ", outs.size(), " outputs");
  auto& op = c.Emit("Split", {c.in(0)}, outs);
  AddArg(op, "axis", c.Int("axis", 0));
  if (!split.empty()) AddArg(op, "split", split);
  for (const auto& o : outs) c.SetRank(o, c.Rank(c.in(0)));
}

// Squeeze / Unsqueeze with axes computed at run time (opset >= 13): our CPU OnnxSqueeze /
// OnnxUnsqueeze; the output's rank is known when the axes' length and the input's rank are.
bool RuntimeAxes(ConvertContext& c, const std::string& type) {
  if (c.opset() < 13 || !c.has_in(1) || c.Const(c.in(1))) return false;
  c.Emit(type, {c.in(0), c.in(1)}, {c.out(0)});
  const auto* a = c.Dims(c.in(1));
  const int rank = c.Rank(c.in(0));
  if (a && a->size() == 1 && (*a)[0] >= 0 && rank >= 0)
    c.SetRank(c.out(0), rank + static_cast<int>(type == "OnnxUnsqueeze" ? (*a)[0] : -(*a)[0]));
  return true;
}

void Squeeze(ConvertContext& c) {
  if (RuntimeAxes(c, "OnnxSqueeze")) return;
  bool given = false;
  std::vector<int64_t> axes = AxesOf(c, 13, &given);
  const auto* d = c.Dims(c.in(0));
  const int rank = d ? static_cast<int>(d->size()) : -1;
  if (!given || axes.empty()) {  // every size-1 dim: needs the static shape
    if (!d || std::count(d->begin(), d->end(), -1))
      c.Refuse("without axes, the input's full shape must be known at import time");
    axes.clear();
    for (int i = 0; i < rank; ++i)
      if ((*d)[i] == 1) axes.push_back(i);
  }
  axes = Canonical(c, axes, rank);
  AddArg(c.Emit("Squeeze", {c.in(0)}, {c.out(0)}), "dims", axes);
  if (d) {
    std::vector<int64_t> out;
    for (int i = 0; i < rank; ++i)
      if (!std::binary_search(axes.begin(), axes.end(), i)) out.push_back((*d)[i]);
    c.SetDims(c.out(0), out);
  }
}

void Unsqueeze(ConvertContext& c) {
  if (RuntimeAxes(c, "OnnxUnsqueeze")) return;
  bool given = false;
  std::vector<int64_t> axes = AxesOf(c, 13, &given);
  if (!given) HN_THROW(kInvalidArgument, "Unsqueeze: axes are required");
  const int in_rank = c.Rank(c.in(0));
  const int rank = in_rank < 0 ? -1 : in_rank + static_cast<int>(axes.size());
  axes = Canonical(c, axes, rank);
  AddArg(c.Emit("ExpandDims", {c.in(0)}, {c.out(0)}), "dims", axes);
  if (const auto* d = c.Dims(c.in(0))) {
    std::vector<int64_t> out;
    size_t k = 0;
    for (int i = 0; i < rank; ++i) out.push_back(std::binary_search(axes.begin(), axes.end(), i) ? 1 : (*d)[k++]);
    c.SetDims(c.out(0), out);
  }
}

void Transpose(ConvertContext& c) {
  auto& op = c.Emit("Transpose", {c.in(0)}, {c.out(0)});
  const auto* d = c.Dims(c.in(0));
  std::vector<int64_t> perm = c.Ints("perm");
  if (c.Has("perm")) AddArg(op, "axes", perm);
  else if (d) for (int i = static_cast<int>(d->size()) - 1; i >= 0; --i) perm.push_back(i);
  if (d && perm.size() == d->size()) {
    std::vector<int64_t> out;
    for (int64_t p : perm) out.push_back(p >= 0 && p < static_cast<int64_t>(d->size()) ? (*d)[p] : -1);
    c.SetDims(c.out(0), out);
  }
}

// Reductions onto hetnet's Reduce{Sum,Mean,Max,Min,Prod,LogSumExp}: axes from the attribute before
// `input_opset`, then from input 1 (an import-time constant becomes arg `axes`; any other blob is
// passed on as the op's input 1, read at run time). The op checks the axes (range, repeats) and does
// noop_with_empty_axes. `pre` and `post` (unary operator types) make ReduceSumSquare, ReduceL1,
// ReduceL2 and ReduceLogSum (applied elementwise also when nothing is reduced, as
// ONNX's reference does).
void Reduce(ConvertContext& c, const std::string& type, int64_t input_opset, const std::string& pre = "",
            const std::string& post = "") {
  std::vector<int64_t> axes;
  std::string runtime_axes;
  if (c.opset() < input_opset) {
    axes = c.Ints("axes");
  } else if (c.has_in(1)) {
    if (const ConstTensor* k = c.Const(c.in(1))) axes = k->Ints("axes");
    else runtime_axes = c.in(1);
  }
  const bool keepdims = c.Int("keepdims", 1) != 0;
  const bool noop = c.opset() >= input_opset && c.Int("noop_with_empty_axes", 0) != 0;
  std::string x = c.in(0);
  if (!pre.empty()) c.Emit(pre, {c.in(0)}, {x = c.Fresh(c.out(0) + "_" + pre)});
  const std::string y = post.empty() ? c.out(0) : c.Fresh(c.out(0) + "_reduced");
  std::vector<std::string> inputs{x};
  if (!runtime_axes.empty()) inputs.push_back(runtime_axes);
  auto& op = c.Emit(type, inputs, {y});
  if (!axes.empty()) AddArg(op, "axes", axes);
  AddArg(op, "keepdims", static_cast<int64_t>(keepdims));
  if (noop) AddArg(op, "noop_with_empty_axes", int64_t{1});
  if (!post.empty()) c.Emit(post, {y}, {c.out(0)});
  const int rank = c.Rank(c.in(0));
  if (rank < 0) return;
  if (keepdims || (runtime_axes.empty() && noop && axes.empty())) {
    c.SetRank(c.out(0), rank);
  } else if (runtime_axes.empty()) {
    std::set<int64_t> red;
    for (int64_t a : axes) red.insert(a < 0 ? a + rank : a);
    c.SetRank(c.out(0), axes.empty() ? 0 : rank - static_cast<int>(red.size()));
  }
}

// Tile: our Tile repeats one axis, numpy-style; one per axis, each taking its count from the repeats
// tensor (a constant or a runtime input) through a Gather of that element.
void Tile(ConvertContext& c) {
  const int rank = c.Rank(c.in(0));
  if (rank < 1) c.Refuse("the input's rank (at least 1) must be declared by the model");
  const ConstTensor* k = c.Const(c.in(1));
  if (k && k->numel() != rank) HN_THROW(kInvalidArgument, "Tile: repeats has ", k->numel(), " values for rank ", rank);
  const std::vector<int64_t> reps = k ? k->Ints("Tile's repeats") : std::vector<int64_t>(rank, -1);
  std::string x = c.in(0);
  for (int i = 0; i < rank; ++i) {
    if (reps[i] == 1) continue;
    const std::string y = c.Fresh(c.out(0) + "_tiled" + std::to_string(i));
    if (reps[i] >= 0) {
      auto& op = c.Emit("Tile", {x}, {y});
      AddArg(op, "tiles", reps[i]);
      AddArg(op, "axis", int64_t{i});
    } else {
      ConstTensor idx;
      idx.dtype = caffe2::TensorProto::INT64;
      idx.integer = {i};
      const std::string n = c.Fresh(c.out(0) + "_repeat" + std::to_string(i));
      c.Emit("Gather", {c.in(1), c.AddConst(c.out(0) + "_axis" + std::to_string(i), std::move(idx))}, {n});
      AddArg(c.Emit("Tile", {x, n}, {y}), "axis", int64_t{i});
    }
    x = y;
  }
  c.Emit("StopGradient", {x}, {c.out(0)});
  c.SetRank(c.out(0), rank);
}

// DepthToSpace / SpaceToDepth as Reshape -> Transpose -> Reshape over NCHW with C, H and W known
// (N stays 0: copied). DCR and CRD orders as ONNX's reference defines them.
void BlockShuffle(ConvertContext& c, bool to_space) {
  const auto* d = c.Dims(c.in(0));
  const int64_t b = c.Int("blocksize", 0);
  if (b < 1 || b > 4096) HN_THROW(kInvalidArgument, c.op_type(), ": blocksize must be in [1, 4096], got ", b);
  if (!d || d->size() != 4 || (*d)[1] < 1 || (*d)[2] < 1 || (*d)[3] < 1)
    c.Refuse("the input must be 4-D with C, H and W declared by the model");
  const int64_t C = (*d)[1], H = (*d)[2], W = (*d)[3];
  const bool crd = c.Str("mode", "DCR") == "CRD";
  std::vector<int64_t> first, perm, last;
  if (to_space) {
    if (C % (b * b)) HN_THROW(kInvalidArgument, "DepthToSpace: channels ", C, " not divisible by blocksize^2");
    first = crd ? std::vector<int64_t>{0, C / (b * b), b, b, H, W} : std::vector<int64_t>{0, b, b, C / (b * b), H, W};
    perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
    last = {0, C / (b * b), H * b, W * b};
  } else {
    if (H % b || W % b) HN_THROW(kInvalidArgument, "SpaceToDepth: H and W must be divisible by blocksize");
    first = {0, C, H / b, b, W / b, b};
    perm = crd ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
    last = {0, C * b * b, H / b, W / b};
  }
  const std::string r = c.Fresh(c.out(0) + "_blocks"), t = c.Fresh(c.out(0) + "_shuffled");
  AddArg(c.Emit("Reshape", {c.in(0)}, {r, c.Fresh(c.out(0) + "_shape0")}), "shape", first);
  AddArg(c.Emit("Transpose", {r}, {t}), "axes", perm);
  AddArg(c.Emit("Reshape", {t}, {c.out(0), c.Fresh(c.out(0) + "_shape1")}), "shape", last);
  std::vector<int64_t> od = last;
  od[0] = (*d)[0];
  c.SetDims(c.out(0), od);
}

}  // namespace

void RegisterTensorConverters(ConverterRegistry& r) {
  r.Add("Constant", Constant);
  r.Add("Reshape", Reshape);
  r.Add("Flatten", Flatten);
  r.Add("Concat", Concat);
  r.Add("Split", Split);
  r.Add("Squeeze", Squeeze);
  r.Add("Unsqueeze", Unsqueeze);
  r.Add("Transpose", Transpose);
  r.Add("ReduceMean", [](ConvertContext& c) { Reduce(c, "ReduceMean", 18); });
  r.Add("ReduceSum", [](ConvertContext& c) { Reduce(c, "ReduceSum", 13); });
  r.Add("ReduceSumSquare", [](ConvertContext& c) { Reduce(c, "ReduceSum", 18, "Sqr"); });
  r.Add("ReduceL1", [](ConvertContext& c) { Reduce(c, "ReduceSum", 18, "Abs"); });
  r.Add("ReduceL2", [](ConvertContext& c) { Reduce(c, "ReduceSum", 18, "Sqr", "Sqrt"); });
  r.Add("ReduceLogSum", [](ConvertContext& c) { Reduce(c, "ReduceSum", 18, "", "Log"); });
  r.Add("ReduceLogSumExp", [](ConvertContext& c) { Reduce(c, "ReduceLogSumExp", 18); });
  r.Add("Tile", Tile);
  r.Add("ReduceMax", [](ConvertContext& c) { Reduce(c, "ReduceMax", 18); });
  r.Add("ReduceMin", [](ConvertContext& c) { Reduce(c, "ReduceMin", 18); });
  r.Add("ReduceProd", [](ConvertContext& c) { Reduce(c, "ReduceProd", 18); });
  r.Add("DepthToSpace", [](ConvertContext& c) { BlockShuffle(c, true); });
  r.Add("SpaceToDepth", [](ConvertContext& c) { BlockShuffle(c, false); });
}

}  // namespace hetnet::onnxio
