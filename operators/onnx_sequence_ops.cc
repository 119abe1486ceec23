#include "operators/onnx_sequence_ops.h"

#include <cstring>
#include <memory>
#include <numeric>

#include "core/gradient.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

std::string OpLabel(const OperatorBase& op) {
  return op.def().name().empty() ? op.type() : op.type() + " '" + op.def().name() + "'";
}

const TensorSequence& SequenceInput(const OperatorBase& op, int i) {
  const Blob* b = op.InputBlob(i);
  const std::string& name = op.def().input(i);
  if (b->empty()) HN_THROW(kNotFound, OpLabel(op), ": input ", i, " ('", name, "') has no data: it was never fed");
  if (!b->IsType<TensorSequence>())
    HN_THROW(kInvalidArgument, OpLabel(op), ": input ", i, " ('", name, "') holds a ", ValueKindName(*b),
             ", not a sequence");
  return b->Get<TensorSequence>();
}

Tensor CpuCopyOf(const Tensor& t) {
  Tensor copy(Device::CPU());
  copy.CopyFrom(t);
  return copy;
}

void CopyValue(OperatorBase& op, int i, int o) {
  if (op.InputBlob(i)->IsTensor()) op.InputTensor(i);  // a tensor without data: names the blob
  if (!CopyOnnxValue(*op.InputBlob(i), op.OutputBlob(o))) op.InputTensor(i);  // names the blob
}

namespace {

void SetSequence(OperatorBase& op, int o, TensorSequence seq) {
  op.OutputBlob(o)->Reset(std::make_shared<TensorSequence>(std::move(seq)));
}

void CheckDtype(const OperatorBase& op, const TensorSequence& seq, const Tensor& t, int i) {
  HN_CHECK_KIND(kInvalidArgument, t.dtype() == seq.dtype, OpLabel(op), ": input ", i, " ('", op.def().input(i),
                "') is ", DataTypeName(t.dtype()), " but the sequence holds ", DataTypeName(seq.dtype));
}

// Position input i (a one-value int32/int64 tensor) in [-n, n) (or [-n, n] with allow_end), as [0, n].
int64_t Position(const OperatorBase& op, int i, int64_t n, bool allow_end) {
  EnforceIndexInput(op, i);
  const Tensor& t = op.InputTensor(i);
  HN_CHECK_KIND(kInvalidArgument, t.numel() == 1, OpLabel(op), ": position '", op.def().input(i),
                "' must hold one value, it has shape ", t.ShapeString());
  const int64_t p = IndexAt(t, 0);
  const int64_t hi = allow_end ? n : n - 1;
  HN_CHECK_KIND(kInvalidArgument, p >= -n && p <= hi, OpLabel(op), ": position ", p, " ('", op.def().input(i),
                "') is out of range for a sequence of ", n, " tensors (allowed: ", -n, "..", hi, ")");
  return p < 0 ? p + n : p;
}

// n elements from src at element offset so to dst at offset d (dst already typed like src).
void CopyElements(const Tensor& src, int64_t so, Tensor* dst, int64_t d, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DataType::String) {
    const auto* s = src.data<std::string>() + so;
    auto* t = dst->mutable_data_existing<std::string>() + d;
    for (int64_t k = 0; k < n; ++k) t[k] = s[k];
    return;
  }
  const size_t item = src.itemsize();
  std::memcpy(static_cast<char*>(const_cast<void*>(dst->raw_data())) + d * item,
              static_cast<const char*>(src.raw_data()) + so * item, n * item);
}

int64_t Product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to; ++k) p *= d[k];
  return p;
}

class SequenceConstructOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    HN_CHECK_KIND(kInvalidArgument, InputSize() >= 1, OpLabel(*this), ": needs at least one input");
    TensorSequence seq;
    seq.dtype = Input(0).dtype();
    for (int i = 0; i < InputSize(); ++i) {
      CheckDtype(*this, seq, Input(i), i);
      seq.items.push_back(CpuCopyOf(Input(i)));
    }
    SetSequence(*this, 0, std::move(seq));
  }
};

class SequenceEmptyOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    TensorSequence seq;
    seq.dtype = static_cast<DataType>(GetSingleArgument<int>("dtype", static_cast<int>(DataType::Float)));
    HN_CHECK_KIND(kInvalidArgument, seq.dtype != DataType::Undefined && ItemSize(seq.dtype) > 0, OpLabel(*this),
                  ": dtype ", static_cast<int>(seq.dtype), " is not a tensor element type");
    SetSequence(*this, 0, std::move(seq));
  }
};

class SequenceAtOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    const TensorSequence& seq = SequenceInput(*this, 0);
    const int64_t p = Position(*this, 1, static_cast<int64_t>(seq.items.size()), false);
    const Tensor item = seq.items[p];  // keeps it alive should the output be the sequence's blob
    OutputBlob(0)->GetMutableTensor(Device::CPU())->CopyFrom(item);
  }
};

class SequenceLengthOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    const int64_t n = static_cast<int64_t>(SequenceInput(*this, 0).items.size());
    *Output(0, {}, DataType::Int64)->mutable_data<int64_t>() = n;
  }
};

class SequenceInsertOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    TensorSequence seq = SequenceInput(*this, 0);
    const int64_t n = static_cast<int64_t>(seq.items.size());
    const int64_t p = InputSize() > 2 ? Position(*this, 2, n, true) : n;
    CheckDtype(*this, seq, Input(1), 1);
    seq.items.insert(seq.items.begin() + p, CpuCopyOf(Input(1)));
    SetSequence(*this, 0, std::move(seq));
  }
};

class SequenceEraseOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    TensorSequence seq = SequenceInput(*this, 0);
    const int64_t n = static_cast<int64_t>(seq.items.size());
    HN_CHECK_KIND(kInvalidArgument, n > 0, OpLabel(*this), ": cannot erase from the empty sequence '",
                  def().input(0), "'");
    const int64_t p = InputSize() > 1 ? Position(*this, 1, n, false) : n - 1;
    seq.items.erase(seq.items.begin() + p);
    SetSequence(*this, 0, std::move(seq));
  }
};

class SplitToSequenceOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    const Tensor& x = Input(0);
    const int r = x.ndim();
    HN_CHECK_KIND(kInvalidArgument, r >= 1, OpLabel(*this), ": input '", def().input(0), "' is a scalar");
    int64_t axis = GetSingleArgument<int64_t>("axis", 0);
    HN_CHECK_KIND(kInvalidArgument, axis >= -r && axis < r, OpLabel(*this), ": axis ", axis,
                  " is out of range for rank ", r);
    if (axis < 0) axis += r;
    const int64_t dim = x.shape()[axis];
    std::vector<int64_t> lengths;
    bool squeeze = false;
    if (InputSize() < 2) {
      lengths.assign(dim, 1);
      squeeze = GetSingleArgument<int64_t>("keepdims", 1) == 0;
    } else {
      EnforceIndexInput(*this, 1);
      const Tensor& s = Input(1);
      HN_CHECK_KIND(kInvalidArgument, s.ndim() <= 1, OpLabel(*this), ": split '", def().input(1),
                    "' must be a scalar or 1-D, it has shape ", s.ShapeString());
      if (s.ndim() == 0) {
        const int64_t len = IndexAt(s, 0);
        HN_CHECK_KIND(kInvalidArgument, len > 0, OpLabel(*this), ": split '", def().input(1), "' is ", len,
                      ", must be positive");
        for (int64_t at = 0; at < dim; at += len) lengths.push_back(std::min(len, dim - at));
      } else {
        int64_t sum = 0;
        for (int64_t k = 0; k < s.numel(); ++k) {
          lengths.push_back(IndexAt(s, k));
          HN_CHECK_KIND(kInvalidArgument, lengths.back() >= 0, OpLabel(*this), ": split '", def().input(1),
                        "' has a negative length");
          sum += lengths.back();
        }
        HN_CHECK_KIND(kInvalidArgument, sum == dim, OpLabel(*this), ": split '", def().input(1), "' sums to ", sum,
                      " but axis ", axis, " of '", def().input(0), "' has ", dim);
      }
    }
    const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1, r);
    TensorSequence seq;
    seq.dtype = x.dtype();
    int64_t start = 0;
    for (int64_t len : lengths) {
      std::vector<int64_t> shape = x.shape();
      shape[axis] = len;
      if (squeeze) shape.erase(shape.begin() + axis);
      Tensor part(shape, x.dtype());
      part.raw_mutable_data(x.dtype());
      for (int64_t o = 0; o < outer; ++o)
        CopyElements(x, (o * dim + start) * inner, &part, o * len * inner, len * inner);
      seq.items.push_back(std::move(part));
      start += len;
    }
    SetSequence(*this, 0, std::move(seq));
  }
};

class ConcatFromSequenceOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    const TensorSequence& seq = SequenceInput(*this, 0);
    const bool new_axis = GetSingleArgument<int64_t>("new_axis", 0) != 0;
    HN_CHECK_KIND(kInvalidArgument, !seq.items.empty(), OpLabel(*this), ": the sequence '", def().input(0),
                  "' is empty");
    const auto& first = seq.items[0].shape();
    const int r = static_cast<int>(first.size()) + (new_axis ? 1 : 0);
    int64_t axis = GetSingleArgument<int64_t>("axis", 0);
    HN_CHECK_KIND(kInvalidArgument, axis >= -r && axis < r, OpLabel(*this), ": axis ", axis, " is out of range for ",
                  new_axis ? "new_axis with elements of rank " : "elements of rank ", first.size());
    if (axis < 0) axis += r;
    std::vector<int64_t> lengths;
    for (size_t k = 0; k < seq.items.size(); ++k) {
      auto shape = seq.items[k].shape();
      if (new_axis) shape.insert(shape.begin() + axis, 1);
      auto want = first;
      if (new_axis) want.insert(want.begin() + axis, 1);
      const bool fits = shape.size() == want.size() && [&] {
        for (size_t d = 0; d < shape.size(); ++d)
          if (static_cast<int64_t>(d) != axis && shape[d] != want[d]) return false;
        return true;
      }();
      HN_CHECK_KIND(kInvalidArgument, fits, OpLabel(*this), ": element ", k, " of '", def().input(0), "' has shape ",
                    seq.items[k].ShapeString(), ", which does not concatenate with element 0's ",
                    seq.items[0].ShapeString(), " along axis ", axis);
      lengths.push_back(shape[axis]);
    }
    auto shape = first;
    if (new_axis) shape.insert(shape.begin() + axis, 1);
    const int64_t outer = Product(shape, 0, axis), inner = Product(shape, axis + 1, shape.size());
    const int64_t total = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
    shape[axis] = total;
    Tensor y(shape, seq.dtype);
    y.raw_mutable_data(seq.dtype);
    int64_t start = 0;
    for (size_t k = 0; k < seq.items.size(); ++k) {
      for (int64_t o = 0; o < outer; ++o)
        CopyElements(seq.items[k], o * lengths[k] * inner, &y, (o * total + start) * inner, lengths[k] * inner);
      start += lengths[k];
    }
    *Output(0) = std::move(y);
  }
};

}  // namespace

#define HN_SEQUENCE_OP(name, ins, outs, doc)                      \
  OPERATOR_SCHEMA(name).NumInputs ins.NumOutputs(outs).SetDoc(doc); \
  REGISTER_CPU_OPERATOR(name, name##Op);                          \
  NO_GRADIENT(name)

HN_SEQUENCE_OP(SequenceConstruct, (1, 1 << 30), 1, "ONNX SequenceConstruct: a sequence of the inputs (one dtype).");
HN_SEQUENCE_OP(SequenceEmpty, (0), 1, "ONNX SequenceEmpty: an empty sequence of arg dtype (caffe2 enum).");
HN_SEQUENCE_OP(SequenceAt, (2), 1, "ONNX SequenceAt: element pos of the sequence (negative from the end).");
HN_SEQUENCE_OP(SequenceLength, (1), 1, "ONNX SequenceLength: the number of elements, an int64 scalar.");
HN_SEQUENCE_OP(SequenceInsert, (2, 3), 1, "ONNX SequenceInsert: the sequence with x inserted at pos (default: end).");
HN_SEQUENCE_OP(SequenceErase, (1, 2), 1, "ONNX SequenceErase: the sequence without element pos (default: last).");
HN_SEQUENCE_OP(SplitToSequence, (1, 2), 1, "ONNX SplitToSequence: x split along arg axis into a sequence.");
HN_SEQUENCE_OP(ConcatFromSequence, (1), 1, "ONNX ConcatFromSequence: the elements joined along arg axis.");

}  // namespace hetnet
