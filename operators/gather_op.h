// Gather(DATA, INDICES) -> OUTPUT, Caffe2's: entries of DATA along `axis` (default 0) picked by
// INDICES (int32 or int64, any shape); OUTPUT's shape is DATA's dims before axis, INDICES' dims, then
// DATA's dims after axis. A negative index counts from the end (-1 is the last, as ONNX and
// Caffe2's wrap_indices); one outside [-n, n) is an error naming its position and value.
// GatherGradient(DATA, INDICES, dOUTPUT) -> dDATA (float32): zeros with dOUTPUT's rows added back at
// their indices (repeated indices accumulate).
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/host_device.h"

namespace hetnet {

// DATA viewed as [outer, n, inner], OUTPUT as [outer, k, inner] (k = INDICES' element count).
struct GatherGeom {
  int64_t outer = 1, n = 1, inner = 1, k = 0;
};

template <typename I>
HN_HOST_DEVICE inline bool WrapGatherIndex(I raw, int64_t n, int64_t* idx) {
  int64_t v = static_cast<int64_t>(raw);
  if (v < 0) v += n;
  *idx = v;
  return v >= 0 && v < n;
}

// Copies rows of `itemsize`-byte elements; returns the position of the first invalid index, or -1
// (nothing is read from DATA for an invalid index).
template <typename I, class Context>
int64_t GatherRows(const GatherGeom& g, size_t itemsize, const void* data, const I* indices, void* out, Context* ctx);
// dData (zeroed here) += dOut's rows at their indices; indices already validated by the forward op.
template <typename I, class Context>
void GatherRowsGradient(const GatherGeom& g, const float* dout, const I* indices, float* ddata, Context* ctx);

GatherGeom MakeGatherGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& data, int64_t num_indices,
                          int axis);
std::vector<int64_t> GatherOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& data,
                                       const std::vector<int64_t>& indices, int axis);
// The error for the invalid index at `pos` (its value read back from the device).
[[noreturn]] void ThrowBadGatherIndex(const caffe2::OperatorDef& def, const Tensor& indices, int64_t pos, int64_t n,
                                      DeviceContext* ctx);

template <class Context>
class GatherOp final : public Operator<Context> {
 public:
  GatherOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 0)) {}
  void RunOnDevice() override {
    const Tensor& D = this->Input(0);
    const Tensor& I = this->Input(1);
    HN_CHECK_KIND(kUnsupported, D.dtype() != DataType::String, "Gather: input 0 ('", this->def().input(0),
                  "') is a string tensor; fixed-size dtypes only");
    const GatherGeom g = MakeGatherGeom(this->def(), D.shape(), I.numel(), axis_);
    Tensor* Y = this->Output(0, GatherOutputShape(this->def(), D.shape(), I.shape(), axis_), D.dtype());
    int64_t bad = -1;
    if (I.dtype() == DataType::Int64) {
      bad = GatherRows<int64_t, Context>(g, D.itemsize(), D.raw_data(), I.template data<int64_t>(),
                                         Y->raw_mutable_data(D.dtype()), &this->context_);
    } else {
      EnforceDtype(this->def(), I, 1, DataType::Int32);
      bad = GatherRows<int32_t, Context>(g, D.itemsize(), D.raw_data(), I.template data<int32_t>(),
                                         Y->raw_mutable_data(D.dtype()), &this->context_);
    }
    if (bad >= 0) ThrowBadGatherIndex(this->def(), I, bad, g.n, &this->context_);
  }

 private:
  int axis_;
};

template <class Context>
class GatherGradientOp final : public Operator<Context> {
 public:
  GatherGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), axis_(this->template GetSingleArgument<int>("axis", 0)) {}
  void RunOnDevice() override {
    const Tensor& D = this->Input(0);
    const Tensor& I = this->Input(1);
    const Tensor& dY = this->Input(2);
    EnforceFloatInput(this->def(), dY, 2);
    const GatherGeom g = MakeGatherGeom(this->def(), D.shape(), I.numel(), axis_);
    HN_ENFORCE(dY.shape() == GatherOutputShape(this->def(), D.shape(), I.shape(), axis_), this->type(),
               ": input 2 ('", this->def().input(2), "') has shape ", dY.ShapeString(),
               " but Gather's output has shape ",
               ShapeToString(GatherOutputShape(this->def(), D.shape(), I.shape(), axis_)));
    Tensor* dD = this->Output(0, D.shape(), DataType::Float);
    if (I.dtype() == DataType::Int64) {
      GatherRowsGradient<int64_t, Context>(g, dY.template data<float>(), I.template data<int64_t>(),
                                           dD->template mutable_data<float>(), &this->context_);
    } else {
      EnforceDtype(this->def(), I, 1, DataType::Int32);
      GatherRowsGradient<int32_t, Context>(g, dY.template data<float>(), I.template data<int32_t>(),
                                           dD->template mutable_data<float>(), &this->context_);
    }
  }

 private:
  int axis_;
};

}  // namespace hetnet
