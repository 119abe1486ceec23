#include "operators/onnx_shape_ops.h"

#include <algorithm>
#include <cstring>

#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

// Input i (when given: present and named) as a list of integers.
std::vector<int64_t> IndexList(const OperatorBase& op, int i) {
  EnforceIndexInput(op, i);
  const Tensor& t = op.InputTensor(i);
  HN_ENFORCE(t.ndim() == 1, op.type(), ": input ", i, " ('", op.def().input(i), "') must be 1-D, but has shape ",
             t.ShapeString());
  std::vector<int64_t> v(t.numel());
  for (int64_t k = 0; k < t.numel(); ++k) v[k] = IndexAt(t, k);
  return v;
}
bool Given(const OperatorBase& op, int i) { return op.InputSize() > i && !op.def().input(i).empty(); }

// Axes made non-negative for `rank` dims, refusing out-of-range and repeated ones (input i named).
std::vector<int64_t> CanonicalAxes(const OperatorBase& op, int i, std::vector<int64_t> axes, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (auto& a : axes) {
    HN_ENFORCE(a >= -rank && a < rank, op.type(), ": axis ", a, " (input ", i, ", '", op.def().input(i),
               "') is out of range for ", rank, " dims");
    if (a < 0) a += rank;
    HN_ENFORCE(!seen[a], op.type(), ": axis ", a, " is repeated in input ", i, " ('", op.def().input(i), "')");
    seen[a] = true;
  }
  return axes;
}

// Y = X's bytes under a new shape (same element count).
void CopyReshaped(OperatorBase& op, const Tensor& X, std::vector<int64_t> shape) {
  Tensor* Y = op.OutputTensor(0, std::move(shape), X.dtype());
  if (X.numel() > 0 && Y->raw_data() != X.raw_data())
    std::memcpy(Y->raw_mutable_data(X.dtype()), X.raw_data(), X.numel() * X.itemsize());
}

}  // namespace

void OnnxSliceOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() != DataType::String, type(), ": input 0 ('", def().input(0), "') is string (unsupported)");
  const std::vector<int64_t> starts = IndexList(*this, 1), ends = IndexList(*this, 2);
  const size_t n = starts.size();
  std::vector<int64_t> axes(n), steps(n, 1);
  for (size_t j = 0; j < n; ++j) axes[j] = static_cast<int64_t>(j);
  if (Given(*this, 3)) axes = IndexList(*this, 3);
  if (Given(*this, 4)) steps = IndexList(*this, 4);
  HN_ENFORCE(ends.size() == n && axes.size() == n && steps.size() == n, type(), ": starts ('", def().input(1),
             "'), ends, axes and steps must have one entry per sliced axis; got ", n, ", ", ends.size(), ", ",
             axes.size(), ", ", steps.size());
  const int r = X.ndim();
  axes = CanonicalAxes(*this, 3, axes, r);
  std::vector<int64_t> first(r, 0), step(r, 1), shape = X.shape();
  for (size_t j = 0; j < n; ++j) {
    const int64_t a = axes[j], d = X.dim(static_cast<int>(a)), s = steps[j];
    HN_ENFORCE(s != 0, type(), ": step 0 for axis ", a, " (input 4, '", Given(*this, 4) ? def().input(4) : "", "')");
    auto clamp = [&](int64_t v) {
      if (v < 0) v = v < -d ? (s > 0 ? 0 : -1) : v + d;  // also keeps |v| small before arithmetic
      return s > 0 ? std::min(v, d) : std::min(std::max<int64_t>(v, -1), d - 1);
    };
    const int64_t b = clamp(starts[j]), e = clamp(ends[j]);
    // Element count of start, start + s, ... short of e (0 when the range is empty); |s| may be huge.
    // |s| as unsigned: -INT64_MIN does not fit in int64.
    const int64_t span = s > 0 ? e - b : b - e;
    const uint64_t mag = s > 0 ? static_cast<uint64_t>(s) : static_cast<uint64_t>(-(s + 1)) + 1;
    shape[a] = span <= 0 ? 0 : 1 + static_cast<int64_t>(static_cast<uint64_t>(span - 1) / mag);
    first[a] = b;
    step[a] = s;
  }
  Tensor* Y = Output(0, shape, X.dtype());
  const size_t item = X.itemsize();
  const char* x = static_cast<const char*>(X.raw_data());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  std::vector<int64_t> stride(r, 1);
  for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * X.dim(d + 1);
  for (int64_t k = 0; k < Y->numel(); ++k) {
    int64_t rem = k, off = 0;
    for (int d = r - 1; d >= 0; --d) {
      const int64_t c = rem % shape[d];
      rem /= shape[d];
      off += (first[d] + c * step[d]) * stride[d];
    }
    std::memcpy(y + k * item, x + off * item, item);
  }
}

void OnnxSqueezeOp::RunOnDevice() {
  const Tensor& X = Input(0);
  std::vector<int64_t> axes;
  if (Given(*this, 1)) axes = CanonicalAxes(*this, 1, IndexList(*this, 1), X.ndim());
  if (axes.empty())
    for (int d = 0; d < X.ndim(); ++d)
      if (X.dim(d) == 1) axes.push_back(d);
  std::vector<bool> drop(X.ndim(), false);
  for (int64_t a : axes) {
    HN_ENFORCE(X.dim(static_cast<int>(a)) == 1, type(), ": dim ", a, " of input 0 ('", def().input(0), "', shape ",
               X.ShapeString(), ") is not 1 and cannot be squeezed");
    drop[a] = true;
  }
  std::vector<int64_t> shape;
  for (int d = 0; d < X.ndim(); ++d)
    if (!drop[d]) shape.push_back(X.dim(d));
  CopyReshaped(*this, X, shape);
}

void OnnxUnsqueezeOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const std::vector<int64_t> given = IndexList(*this, 1);
  const int64_t rank = X.ndim() + static_cast<int64_t>(given.size());
  const std::vector<int64_t> axes = CanonicalAxes(*this, 1, given, rank);
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) inserted[a] = true;
  std::vector<int64_t> shape;
  for (int64_t d = 0, from = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : X.dim(static_cast<int>(from++)));
  CopyReshaped(*this, X, shape);
}

OPERATOR_SCHEMA(OnnxSlice).NumInputs(3, 5).NumOutputs(1)
    .SetDoc("ONNX's Slice (opset 13) with starts, ends, axes, steps as run-time int32/int64 inputs: negative "
            "indices from the end, clamping, negative steps. CPU only; no gradient.");
OPERATOR_SCHEMA(OnnxSqueeze).NumInputs(1, 2).NumOutputs(1)
    .SetDoc("ONNX's Squeeze (opset 13) with the axes as a run-time int32/int64 input (none: every size-1 dim). "
            "CPU only.");
OPERATOR_SCHEMA(OnnxUnsqueeze).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's Unsqueeze (opset 13) with the axes (positions in the output) as a run-time int32/int64 input. "
            "CPU only.");
REGISTER_CPU_OPERATOR(OnnxSlice, OnnxSliceOp);
REGISTER_CPU_OPERATOR(OnnxSqueeze, OnnxSqueezeOp);
REGISTER_CPU_OPERATOR(OnnxUnsqueeze, OnnxUnsqueezeOp);

}  // namespace hetnet
