// Slice(data[, starts, ends]) -> output, Caffe2's: for each leading dim i < len(starts), the range
// [starts[i], ends[i]) of data's dim i; later dims are kept whole. starts/ends come from the int
// arguments of those names or from 1-D int32/int64 inputs 1 and 2 (on CPU for any device). A negative
// value v stands for dim + 1 + v (so -1 is the end of the dim, Caffe2's rule, not Python's); values
// past the dim are clamped to it; a start after its end is an error. Caffe2 allowed one sliced dim;
// here any number may be. Any fixed-size dtype.
// SliceGradient(data[, starts, ends], dOutput) -> dData: zeros with dOutput written into the slice.
#pragma once

#include "core/operator.h"
#include "device/broadcast.h"
#include "device/math.h"

namespace hetnet {

// The slice as a strided view of data: output element i is data element base + off(i).
struct SlicePlan {
  std::vector<int64_t> out_shape;
  math::BroadcastIndex ix;
  int64_t base = 0;
};

SlicePlan MakeSlicePlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& in,
                        const std::vector<int64_t>& starts, const std::vector<int64_t>& ends);
// starts and ends from the arguments (S and E null), or from inputs S, E (numbered first, first + 1;
// 1-D int32/int64 on CPU).
void ReadSliceBounds(const caffe2::OperatorDef& def, const Tensor* S, const Tensor* E, int first,
                     std::vector<int64_t>* starts, std::vector<int64_t>* ends);

template <class Context>
class SliceOp final : public Operator<Context> {
 public:
  SliceOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {
    HN_ENFORCE(def.input_size() == 1 || def.input_size() == 3, "Slice: takes data alone (bounds as arguments) or "
               "data, starts, ends; got ", def.input_size(), " inputs");
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    HN_CHECK_KIND(kUnsupported, X.dtype() != DataType::String, "Slice: input 0 ('", this->def().input(0),
                  "') is a string tensor; fixed-size dtypes only");
    std::vector<int64_t> starts, ends;
    const bool inputs = this->InputSize() == 3;
    ReadSliceBounds(this->def(), inputs ? &this->Input(1) : nullptr, inputs ? &this->Input(2) : nullptr, 1, &starts,
                    &ends);
    const SlicePlan p = MakeSlicePlan(this->def(), X.shape(), starts, ends);
    Tensor* Y = this->Output(0, p.out_shape, X.dtype());
    const char* x = static_cast<const char*>(X.raw_data()) + p.base * X.itemsize();
    math::BroadcastCopy<Context>(p.ix, Y->numel(), X.itemsize(), x, Y->raw_mutable_data(X.dtype()), &this->context_);
  }
};

template <class Context>
class SliceGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const int n = this->InputSize();
    HN_ENFORCE(n == 2 || n == 4, "SliceGradient: takes (data, dOutput) or (data, starts, ends, dOutput); got ", n,
               " inputs");
    const Tensor& X = this->Input(0);
    const Tensor& dY = this->Input(n - 1);
    std::vector<int64_t> starts, ends;
    ReadSliceBounds(this->def(), n == 4 ? &this->Input(1) : nullptr, n == 4 ? &this->Input(2) : nullptr, 1, &starts,
                    &ends);
    const SlicePlan p = MakeSlicePlan(this->def(), X.shape(), starts, ends);
    HN_ENFORCE(dY.shape() == p.out_shape, "SliceGradient: input ", n - 1, " ('", this->def().input(n - 1),
               "') has shape ", dY.ShapeString(), " but the slice has shape ", ShapeToString(p.out_shape));
    HN_CHECK_KIND(kUnsupported, dY.dtype() != DataType::String, "SliceGradient: string tensors are not supported");
    Tensor* dX = this->Output(0, X.shape(), dY.dtype());
    char* dx = static_cast<char*>(dX->raw_mutable_data(dY.dtype()));
    math::Set<uint8_t, Context>(static_cast<int64_t>(dX->nbytes()), 0, reinterpret_cast<uint8_t*>(dx), &this->context_);
    math::ScatterCopy<Context>(p.ix, dY.numel(), dY.itemsize(), dY.raw_data(), dx + p.base * dY.itemsize(),
                               &this->context_);
  }
};

}  // namespace hetnet
