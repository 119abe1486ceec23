// Exporters of the arithmetic and matrix operators: Add, Sub, Mul, Div and the comparisons EQ, NE,
// GT, GE, LT, LE (Caffe2 legacy broadcast), Sum, WeightedSum, Clip, Cast (FloatToHalf, HalfToFloat),
// MatMul, BatchMatMul, ReduceSum, ReduceMean.
#include <limits>

#include "core/error.h"
#include "onnx/export_context.h"

namespace hetnet::onnxio::exporter {

namespace {

// Caffe2's broadcast=1 lines B's dims up with A's starting at `axis` (default: A's suffix). ONNX
// broadcasts numpy-style from the right, so B gets trailing 1s: [1]*axis + B + [1]*(rest).
std::string NumpyBroadcastB(OpExport& op) {
  const auto& a = op.in_facts[0].shape;
  const auto& b = op.in_facts[1].shape;
  if (a == b || op.args.GetSingleArgument<int>("broadcast", 0) == 0) return op.in[1];
  int64_t numel = 1;
  for (int64_t d : b) numel *= d;
  if (numel == 1) return op.in[1];  // one element broadcasts anywhere
  const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  int axis = op.args.GetSingleArgument<int>("axis", -1);
  if (axis == -1) axis = na - nb;
  HN_ENFORCE(axis >= 0 && axis + nb <= na, op.def.type(), ": axis ", axis, " leaves no room for input 1's ", nb,
             " dims");
  if (axis + nb == na) return op.in[1];  // already aligned to the right
  std::vector<int64_t> shape(axis, 1);
  shape.insert(shape.end(), b.begin(), b.end());
  shape.resize(na, 1);
  return op.ReshapedInput(1, shape, "b_bcast");
}

ExportFn Binary(const std::string& onnx_type, bool negate = false) {
  return [onnx_type, negate](OpExport& op) {
    // Equal takes floats from opset 11, Greater / Less integers from opset 9.
    const DataType dt = op.in_facts[0].dtype;
    const bool is_float = dt == DataType::Float || dt == DataType::Double || dt == DataType::Float16;
    if (onnx_type == "Equal" && is_float && op.opset() < 11) op.Unsupported("floating-point Equal needs opset 11");
    if ((onnx_type == "Greater" || onnx_type == "Less") && !is_float && op.opset() < 9)
      op.Unsupported("integer " + onnx_type + " needs opset 9");
    const std::string b = NumpyBroadcastB(op);
    if (!negate) {
      op.g.Node(onnx_type, {op.in[0], b}, {op.out[0]});
      return;
    }
    const std::string t = op.Temp(onnx_type);
    op.g.Node(onnx_type, {op.in[0], b}, {t});
    op.g.Node("Not", {t}, {op.out[0]});
  };
}

// GE / LE: one node from opset 12, else the negation of the strict comparison the other way.
ExportFn OrEqual(const std::string& onnx_type, const std::string& negated_strict) {
  return [onnx_type, negated_strict](OpExport& op) {
    (op.opset() >= 12 ? Binary(onnx_type) : Binary(negated_strict, true))(op);
  };
}

void ExportSum(OpExport& op) { op.g.Node("Sum", op.in, {op.out[0]}); }

// WeightedSum(X0, w0, X1, w1, ...) = sum of Xi * wi (each w one element): Mul per pair, then Sum.
void ExportWeightedSum(OpExport& op) {
  if (op.in.size() % 2 != 0) op.Unsupported("odd number of inputs");
  std::vector<std::string> terms;
  for (size_t i = 0; i < op.in.size(); i += 2) {
    terms.push_back(op.Temp("term"));
    op.g.Node("Mul", {op.in[i], op.in[i + 1]}, {terms.back()});
  }
  op.g.Node("Sum", terms, {op.out[0]});
}

void ExportClip(OpExport& op) {
  const bool has_min = op.args.HasArgument("min"), has_max = op.args.HasArgument("max");
  const float lo = op.args.GetSingleArgument<float>("min", std::numeric_limits<float>::lowest());
  const float hi = op.args.GetSingleArgument<float>("max", std::numeric_limits<float>::max());
  if (op.opset() < 11) {
    auto* n = op.g.Node("Clip", {op.in[0]}, {op.out[0]});
    if (has_min) SetAttr(n, "min", lo);
    if (has_max) SetAttr(n, "max", hi);
    return;
  }
  const DataType dt = op.in_facts[0].dtype;
  op.g.Node("Clip",
            {op.in[0], has_min ? op.g.Scalar(op.out[0] + "_min", dt, lo) : "",
             has_max ? op.g.Scalar(op.out[0] + "_max", dt, hi) : ""},
            {op.out[0]});
}

void ExportCast(OpExport& op) {
  if (op.args.GetSingleArgument<int>("clip", 0) != 0) op.Unsupported("clip=1, saturating cast");
  SetAttr(op.g.Node("Cast", {op.in[0]}, {op.out[0]}), "to", int64_t{OnnxElemType(op.out_facts[0].dtype)});
}

std::string Transposed2D(OpExport& op, const std::string& x, const char* what) {
  const std::string t = op.Temp(what);
  SetAttr(op.g.Node("Transpose", {x}, {t}), "perm", std::vector<int64_t>{1, 0});
  return t;
}

// MatMul flattens A at axis_a and B at axis_b to 2-D, optionally transposes each; Y is [M, N].
void ExportMatMul(OpExport& op) {
  if (op.in.size() > 2) op.Unsupported("third input, output shaped like it");
  std::string ab[2];
  const char* names[2][2] = {{"axis_a", "trans_a"}, {"axis_b", "trans_b"}};
  for (int i = 0; i < 2; ++i) {
    const int rank = op.in_rank(i);
    int axis = op.args.GetSingleArgument<int>(names[i][0], 1);
    if (axis < 0) axis += rank;
    ab[i] = op.in[i];
    if (!(rank == 2 && axis == 1)) {
      ab[i] = op.Temp(i ? "b2d" : "a2d");
      SetAttr(op.g.Node("Flatten", {op.in[i]}, {ab[i]}), "axis", int64_t{axis});
    }
    if (op.args.GetSingleArgument<int>(names[i][1], 0) != 0) ab[i] = Transposed2D(op, ab[i], i ? "bT" : "aT");
  }
  op.g.Node("MatMul", {ab[0], ab[1]}, {op.out[0]});
}

// BatchMatMul over the last two dims; 2-D or more on both sides has numpy's (= ONNX's) batch rule.
void ExportBatchMatMul(OpExport& op) {
  std::string ab[2];
  for (int i = 0; i < 2; ++i) {
    const int rank = op.in_rank(i);
    if (rank < 2) op.Unsupported("1-D operand");
    ab[i] = op.in[i];
    if (op.args.GetSingleArgument<int>(i ? "trans_b" : "trans_a", 0) != 0) {
      std::vector<int64_t> perm(rank);
      for (int d = 0; d < rank; ++d) perm[d] = d;
      std::swap(perm[rank - 1], perm[rank - 2]);
      ab[i] = op.Temp(i ? "bT" : "aT");
      SetAttr(op.g.Node("Transpose", {op.in[i]}, {ab[i]}), "perm", perm);
    }
  }
  op.g.Node("MatMul", {ab[0], ab[1]}, {op.out[0]});
}

// ONNX takes the axes as an input from opset 13 (ReduceSum) or 18 (ReduceMean): hetnet's runtime axes
// input 1 and noop_with_empty_axes export only there.
void ExportReduce(OpExport& op, const std::string& onnx_type, int64_t axes_input_opset) {
  const int keepdims = op.args.GetSingleArgument<int>("keepdims", 1);
  const bool noop = op.args.GetSingleArgument<int>("noop_with_empty_axes", 0) != 0;
  const bool has_axes = op.args.HasArgument("axes");
  const bool axes_input = op.opset() >= axes_input_opset;
  if (!axes_input && op.in.size() > 1) op.Unsupported("axes from input 1 before opset " + std::to_string(axes_input_opset));
  if (!axes_input && noop) op.Unsupported("noop_with_empty_axes=1 before opset " + std::to_string(axes_input_opset));
  std::vector<int64_t> axes;
  for (int a : op.args.GetRepeatedArgument<int>("axes")) axes.push_back(a);
  onnx::NodeProto* n = op.g.Node(onnx_type, {op.in[0]}, {op.out[0]});
  if (axes_input && op.in.size() > 1) n->add_input(op.in[1]);
  else if (axes_input && has_axes) n->add_input(op.g.Int64s(op.out[0] + "_axes", axes));
  else if (has_axes) SetAttr(n, "axes", axes);
  SetAttr(n, "keepdims", int64_t{keepdims != 0});
  if (noop) SetAttr(n, "noop_with_empty_axes", int64_t{1});
}

}  // namespace

void AddArithmeticExporters(ExporterTable& t) {
  t["Add"] = Binary("Add");
  t["Sub"] = Binary("Sub");
  t["Mul"] = Binary("Mul");
  t["Div"] = Binary("Div");
  t["EQ"] = Binary("Equal");
  t["NE"] = Binary("Equal", true);
  t["GT"] = Binary("Greater");
  t["LT"] = Binary("Less");
  t["GE"] = OrEqual("GreaterOrEqual", "Less");
  t["LE"] = OrEqual("LessOrEqual", "Greater");
  t["Sum"] = ExportSum;
  t["Clip"] = ExportClip;
  t["Cast"] = ExportCast;
  t["FloatToHalf"] = ExportCast;  // the output dtype comes from the reference run
  t["HalfToFloat"] = ExportCast;
  t["WeightedSum"] = ExportWeightedSum;
  t["MatMul"] = ExportMatMul;
  t["BatchMatMul"] = ExportBatchMatMul;
  t["ReduceSum"] = [](OpExport& op) { ExportReduce(op, "ReduceSum", 13); };
  t["ReduceMean"] = [](OpExport& op) { ExportReduce(op, "ReduceMean", 18); };
}

}  // namespace hetnet::onnxio::exporter
