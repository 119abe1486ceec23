// Concat(X_0, ..., X_{n-1}) -> concat_result, split_info and Split(X[, split]) -> Y_0, ..., Y_{n-1}, Caffe2
// semantics, any non-string dtype (bytes are copied):
//   axis (default 1), or order "NCHW" (axis 1) / "NHWC" (axis 3), not both. add_axis=1 stacks the inputs
//   along a new axis (Split: removes the axis, each piece of size 1). Concat's split_info is int32 [n], the
//   inputs' sizes along the axis, and lives on CPU for any device. Split's sizes come from the `split`
//   argument or from input 1 (int32 [n], on CPU for any device), or else are equal.
// Gradients: Concat -> Split(dY, split_info), Split -> Concat(dY_0, ...).
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// rows x row_bytes block: dst[r * dst_pitch + c] = src[r * src_pitch + c] (pitches in bytes).
template <class Context>
void CopyMatrixBytes(int64_t rows, int64_t row_bytes, const void* src, int64_t src_pitch, void* dst,
                     int64_t dst_pitch, Context* ctx);

// The concatenation axis from `axis` / `order`; ndim is the rank the axis indexes.
int ConcatAxis(const caffe2::OperatorDef& def, int ndim);

struct ConcatPlan {
  int axis;
  int64_t outer, after;        // every input is [outer, sizes[i], after]
  std::vector<int64_t> sizes;  // split_info
  std::vector<int64_t> y_shape;
};
ConcatPlan ComputeConcatPlan(const caffe2::OperatorDef& def, const std::vector<std::vector<int64_t>>& in,
                             const std::vector<DataType>& dtypes);

struct SplitPlan {
  int64_t outer, after;
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> shapes;
};
// split: the sizes from input 1 (nullptr when there is none).
SplitPlan ComputeSplitPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                           const std::vector<int64_t>* split);

template <class Context>
class ConcatOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    std::vector<std::vector<int64_t>> shapes;
    std::vector<DataType> dtypes;
    for (int i = 0; i < this->InputSize(); ++i) {
      PlainItemSize(this->def(), this->Input(i), i);
      shapes.push_back(this->Input(i).shape());
      dtypes.push_back(this->Input(i).dtype());
    }
    const ConcatPlan p = ComputeConcatPlan(this->def(), shapes, dtypes);
    const DataType dt = dtypes[0];
    const int64_t item = static_cast<int64_t>(ItemSize(dt));
    Tensor* info = this->Output(1, {static_cast<int64_t>(p.sizes.size())}, DataType::Int32);
    int32_t* si = info->template mutable_data<int32_t>();
    for (size_t i = 0; i < p.sizes.size(); ++i) si[i] = static_cast<int32_t>(p.sizes[i]);
    int64_t total = 0;
    for (int64_t s : p.sizes) total += s;
    Tensor* Y = this->Output(0, p.y_shape, dt);
    char* y = static_cast<char*>(Y->raw_mutable_data(dt));
    int64_t offset = 0;
    for (int i = 0; i < this->InputSize(); ++i) {
      const int64_t row = p.sizes[i] * p.after * item;
      if (p.outer > 0 && row > 0)
        CopyMatrixBytes<Context>(p.outer, row, this->Input(i).raw_data(), row, y + offset, total * p.after * item,
                                 &this->context_);
      offset += row;
    }
  }
};

template <class Context>
class SplitOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    // A local view keeps X alive should an output replace its blob.
    const Tensor X = this->Input(0);
    PlainItemSize(this->def(), X, 0);
    std::vector<int64_t> split;
    if (this->InputSize() > 1) {
      const Tensor& S = this->Input(1);
      EnforceDtype(this->def(), S, 1, DataType::Int32);
      HN_ENFORCE(S.ndim() == 1, this->type(), ": input 1 ('", this->def().input(1), "') must be 1-D, has shape ",
                 S.ShapeString());
      split.assign(S.template data<int32_t>(), S.template data<int32_t>() + S.numel());
    }
    const SplitPlan p = ComputeSplitPlan(this->def(), X.shape(), this->InputSize() > 1 ? &split : nullptr);
    const int64_t item = static_cast<int64_t>(X.itemsize());
    const char* x = static_cast<const char*>(X.raw_data());
    int64_t total = 0;
    for (int64_t s : p.sizes) total += s;
    int64_t offset = 0;
    for (int o = 0; o < this->OutputSize(); ++o) {
      Tensor* Y = this->Output(o, p.shapes[o], X.dtype());
      const int64_t row = p.sizes[o] * p.after * item;
      if (p.outer > 0 && row > 0)
        CopyMatrixBytes<Context>(p.outer, row, x + offset, total * p.after * item, Y->raw_mutable_data(X.dtype()), row,
                                 &this->context_);
      offset += row;
    }
  }
};

}  // namespace hetnet
