#include "operators/scatter_ops.h"

#include <algorithm>
#include <cstring>

#include "core/argument.h"
#include "operators/cnn_op_utils.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

ScatterReduction ParseReduction(const caffe2::OperatorDef& def) {
  const std::string r = ArgumentHelper(def).GetSingleArgument<std::string>("reduction", "none");
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  HN_THROW(kInvalidArgument, def.type(), ": arg reduction is '", r, "'; none, add, mul, max or min is required");
}

// Index `k` (from input i at position pos) checked against a dim of `size` and made non-negative.
int64_t CheckedIndex(const OperatorBase& op, int i, int64_t k, int64_t pos, int64_t size, int dim) {
  HN_ENFORCE(k >= -size && k < size, op.type(), ": input ", i, " ('", op.def().input(i), "') holds ", k,
             " at position ", pos, ", outside [", -size, ", ", size, ") for dim ", dim, " of input 0 ('",
             op.def().input(0), "')");
  return k < 0 ? k + size : k;
}

// dst[0..n) = combine(dst, src) elementwise (elements of X's dtype), or a copy without a reduction.
class Combiner {
 public:
  Combiner(const OperatorBase& op, DataType t, ScatterReduction r) : op_(op), t_(t), r_(r), item_(ItemSize(t)) {
    HN_ENFORCE(t != DataType::String, op.type(), ": input 0 ('", op.def().input(0), "') is string (unsupported)");
    if (r != ScatterReduction::kNone) DispatchArithmetic(op, t, 0, [](auto) {});  // refuses non-numeric
  }
  void operator()(char* dst, const char* src, int64_t n) const {
    if (r_ == ScatterReduction::kNone) {
      std::memcpy(dst, src, n * item_);
      return;
    }
    DispatchArithmetic(op_, t_, 0, [&](auto zero) {
      using T = decltype(zero);
      T* d = reinterpret_cast<T*>(dst);
      const T* s = reinterpret_cast<const T*>(src);
      for (int64_t j = 0; j < n; ++j) {
        switch (r_) {
          case ScatterReduction::kAdd: d[j] = static_cast<T>(d[j] + s[j]); break;
          case ScatterReduction::kMul: d[j] = static_cast<T>(d[j] * s[j]); break;
          case ScatterReduction::kMax: d[j] = std::max(d[j], s[j]); break;
          case ScatterReduction::kMin: d[j] = std::min(d[j], s[j]); break;
          case ScatterReduction::kNone: break;
        }
      }
    });
  }

 private:
  const OperatorBase& op_;
  DataType t_;
  ScatterReduction r_;
  size_t item_;
};

// The row-major offset (in elements) of the slice data[idx[0]..idx[k-1]] for an index tuple of
// input i at tuple position pos, dims from `first` of data's shape.
int64_t TupleOffset(const OperatorBase& op, const Tensor& data, const Tensor& indices, int64_t tuple, int64_t k,
                    int first) {
  int64_t off = 0;
  for (int64_t j = 0; j < k; ++j) {
    const int d = first + static_cast<int>(j);
    off = off * data.dim(d) + CheckedIndex(op, 1, IndexAt(indices, tuple * k + j), tuple * k + j, data.dim(d), d);
  }
  return off * ProdDims(data.shape(), first + k, data.shape().size());
}

}  // namespace

void GatherNDOp::RunOnDevice() {
  const Tensor &X = Input(0), &I = Input(1);
  EnforceIndexInput(*this, 1);
  HN_ENFORCE(X.dtype() != DataType::String, type(), ": input 0 ('", def().input(0), "') is string (unsupported)");
  const int64_t b = GetSingleArgument<int64_t>("batch_dims", 0);
  const int r = X.ndim(), q = I.ndim();
  HN_ENFORCE(q >= 1 && b >= 0 && b < std::min(r, q), type(), ": arg batch_dims ", b, " must be below the ranks of ",
             "input 0 ('", def().input(0), "', ", r, ") and input 1 ('", def().input(1), "', ", q, ")");
  const int64_t k = I.dim(-1);
  HN_ENFORCE(k >= 1 && k <= r - b, type(), ": the last dim of input 1 ('", def().input(1), "') is ", k,
             "; it must be in [1, ", r - b, "] (input 0's rank minus batch_dims)");
  for (int d = 0; d < b; ++d)
    HN_ENFORCE(X.dim(d) == I.dim(d), type(), ": batch dim ", d, " differs: input 0 ('", def().input(0), "') ",
               X.ShapeString(), ", input 1 ('", def().input(1), "') ", I.ShapeString());
  std::vector<int64_t> shape(I.shape().begin(), I.shape().end() - 1);
  shape.insert(shape.end(), X.shape().begin() + b + k, X.shape().end());
  Tensor* Y = Output(0, shape, X.dtype());
  const int64_t batches = ProdDims(X.shape(), 0, b), per_batch = ProdDims(X.shape(), b, r),
                tuples = ProdDims(I.shape(), b, q - 1), slice = ProdDims(X.shape(), b + k, r);
  const size_t item = X.itemsize();
  const char* x = static_cast<const char*>(X.raw_data());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t tuple = bi * tuples + t;
      const int64_t from = bi * per_batch + TupleOffset(*this, X, I, tuple, k, static_cast<int>(b));
      std::memcpy(y + tuple * slice * item, x + from * item, slice * item);
    }
}

ScatterNDOp::ScatterNDOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), reduction_(ParseReduction(def)) {}

void ScatterNDOp::RunOnDevice() {
  const Tensor &X = Input(0), &I = Input(1), &U = Input(2);
  EnforceIndexInput(*this, 1);
  const int r = X.ndim(), q = I.ndim();
  HN_ENFORCE(q >= 1, type(), ": input 1 ('", def().input(1), "') must have at least one dim");
  const int64_t k = I.dim(-1);
  HN_ENFORCE(k >= 1 && k <= r, type(), ": the last dim of input 1 ('", def().input(1), "') is ", k,
             "; it must be in [1, ", r, "] (the rank of input 0, '", def().input(0), "')");
  std::vector<int64_t> want(I.shape().begin(), I.shape().end() - 1);
  want.insert(want.end(), X.shape().begin() + k, X.shape().end());
  HN_ENFORCE(U.shape() == want && U.dtype() == X.dtype(), type(), ": updates (input 2, '", def().input(2), "') are ",
             DataTypeName(U.dtype()), U.ShapeString(), " but must be ", DataTypeName(X.dtype()),
             ShapeToString(want), " (indices' shape without its last dim, then data's dims from ", k, ")");
  const Combiner combine(*this, X.dtype(), reduction_);
  Tensor* Y = Output(0, X.shape(), X.dtype());
  const size_t item = X.itemsize();
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  if (X.numel() > 0 && Y != &X) std::memcpy(y, X.raw_data(), X.numel() * item);
  const int64_t tuples = ProdDims(I.shape(), 0, q - 1), slice = ProdDims(X.shape(), k, r);
  const char* u = static_cast<const char*>(U.raw_data());
  for (int64_t t = 0; t < tuples; ++t)
    combine(y + TupleOffset(*this, X, I, t, k, 0) * item, u + t * slice * item, slice);
}

ScatterElementsOp::ScatterElementsOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), reduction_(ParseReduction(def)) {}

void ScatterElementsOp::RunOnDevice() {
  const Tensor &X = Input(0), &I = Input(1), &U = Input(2);
  EnforceIndexInput(*this, 1);
  const int r = X.ndim();
  HN_ENFORCE(r >= 1, type(), ": input 0 ('", def().input(0), "') must have at least one dim");
  const int axis = CanonicalAxisFor(def(), GetSingleArgument<int>("axis", 0), r, 0);
  HN_ENFORCE(I.shape() == U.shape() && U.dtype() == X.dtype() && I.ndim() == r, type(), ": indices (input 1, '",
             def().input(1), "', ", I.ShapeString(), ") and updates (input 2, '", def().input(2), "', ",
             DataTypeName(U.dtype()), U.ShapeString(), ") must have one shape of input 0's rank and updates input 0's ",
             "dtype (", DataTypeName(X.dtype()), ")");
  for (int d = 0; d < r; ++d)
    HN_ENFORCE(d == axis || I.dim(d) <= X.dim(d), type(), ": input 1 ('", def().input(1), "') of shape ",
               I.ShapeString(), " is larger than input 0 ('", def().input(0), "') of shape ", X.ShapeString(),
               " in dim ", d);
  const Combiner combine(*this, X.dtype(), reduction_);
  Tensor* Y = Output(0, X.shape(), X.dtype());
  const size_t item = X.itemsize();
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  if (X.numel() > 0 && Y != &X) std::memcpy(y, X.raw_data(), X.numel() * item);
  const char* u = static_cast<const char*>(U.raw_data());
  const std::vector<int64_t> strides = RowMajorStrides(X.shape());
  for (int64_t p = 0; p < I.numel(); ++p) {
    int64_t rem = p, off = 0;
    for (int d = r - 1; d >= 0; --d) {
      const int64_t c = rem % I.dim(d);
      rem /= I.dim(d);
      off += (d == axis ? CheckedIndex(*this, 1, IndexAt(I, p), p, X.dim(axis), axis) : c) * strides[d];
    }
    combine(y + off * item, u + p * item, 1);
  }
}

void TensorScatterOp::RunOnDevice() {
  const Tensor &X = Input(0), &U = Input(1);
  HN_ENFORCE(X.dtype() != DataType::String && U.dtype() == X.dtype(), type(), ": cache (input 0, '", def().input(0),
             "') and update (input 1, '", def().input(1), "') must have one non-string dtype; they are ",
             DataTypeName(X.dtype()), " and ", DataTypeName(U.dtype()));
  const int r = X.ndim();
  HN_ENFORCE(r >= 2, type(), ": cache (input 0, '", def().input(0), "') needs a batch dim and an axis");
  const int axis = CanonicalAxisFor(def(), GetSingleArgument<int>("axis", -2), r, 0);
  HN_ENFORCE(axis >= 1, type(), ": arg axis must not be the batch dim 0");
  bool fits = U.ndim() == r;
  for (int d = 0; fits && d < r; ++d) fits = d == axis ? U.dim(d) <= X.dim(d) : U.dim(d) == X.dim(d);
  HN_ENFORCE(fits, type(), ": update (input 1, '", def().input(1), "') has shape ", U.ShapeString(), "; cache ('",
             def().input(0), "') is ", X.ShapeString(), " (equal dims, a shorter or equal axis ", axis, ")");
  const std::string mode = GetSingleArgument<std::string>("mode", "linear");
  HN_ENFORCE(mode == "linear" || mode == "circular", type(), ": arg mode is '", mode, "'; linear or circular");
  const bool has_idx = InputSize() > 2 && !def().input(2).empty();
  if (has_idx) {
    EnforceIndexInput(*this, 2);
    HN_ENFORCE(Input(2).numel() == X.dim(0), type(), ": write_indices (input 2, '", def().input(2), "') has ",
               Input(2).numel(), " values for ", X.dim(0), " batch entries");
  }
  Tensor* Y = Output(0, X.shape(), X.dtype());
  const size_t item = X.itemsize();
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  if (X.numel() > 0 && Y != &X) std::memcpy(y, X.raw_data(), X.numel() * item);
  const int64_t batch = X.dim(0), mid = ProdDims(X.shape(), 1, axis), s_max = X.dim(axis), s = U.dim(axis),
                inner = ProdDims(X.shape(), axis + 1, r) * static_cast<int64_t>(item);
  const char* u = static_cast<const char*>(U.raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = has_idx ? IndexAt(Input(2), b) : 0;
    for (int64_t q = 0; q < s; ++q) {
      int64_t at = start + q;
      if (mode == "circular") at = s_max == 0 ? 0 : ((at % s_max) + s_max) % s_max;
      HN_ENFORCE(at >= 0 && at < s_max, type(), ": write_indices (input 2, '", has_idx ? def().input(2) : "",
                 "') start ", start, " for batch entry ", b, " writes past the ", s_max, " positions of axis ", axis);
      for (int64_t m = 0; m < mid; ++m)
        std::memcpy(y + ((b * mid + m) * s_max + at) * inner, u + ((b * mid + m) * s + q) * inner, inner);
    }
  }
}

namespace {
std::vector<TensorInfo> LikeInput0(const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
  return {in[0].known ? TensorInfo::Of(in[0].dims, in[0].dtype) : TensorInfo::Unknown()};
}
}  // namespace

OPERATOR_SCHEMA(GatherND).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's GatherND(data, indices) -> Y with arg batch_dims (default 0): slices of data at the index tuples "
            "in indices' last dim (negative indices count from the end). CPU only; no gradient.");
OPERATOR_SCHEMA(ScatterND).NumInputs(3).NumOutputs(1).AllowInplace({{0, 0}}).TensorInference(LikeInput0)
    .SetDoc("ONNX's ScatterND(data, indices, updates) -> Y: data with the slices at indices' tuples replaced by "
            "updates, or combined (arg reduction add / mul / max / min). CPU only; no gradient.");
OPERATOR_SCHEMA(ScatterElements).NumInputs(3).NumOutputs(1).AllowInplace({{0, 0}}).TensorInference(LikeInput0)
    .SetDoc("ONNX's ScatterElements(data, indices, updates) -> Y with arg axis (default 0) and arg reduction (none, "
            "add, mul, max, min): Y = data; Y[.. indices[p] at axis ..] = updates[p]. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(GatherND, GatherNDOp);
REGISTER_CPU_OPERATOR(ScatterND, ScatterNDOp);
REGISTER_CPU_OPERATOR(ScatterElements, ScatterElementsOp);
OPERATOR_SCHEMA(TensorScatter).NumInputs(2, 3).NumOutputs(1).AllowInplace({{0, 0}}).TensorInference(LikeInput0)
    .SetDoc("ONNX's TensorScatter(cache, update[, write_indices]) -> Y: update written into cache along arg axis "
            "(default -2) from each batch entry's write index; arg mode linear or circular. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(TensorScatter, TensorScatterOp);

}  // namespace hetnet
