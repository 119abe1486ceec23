// Where(C, X, Y) -> Z: Z = C ? X : Y elementwise, C BOOL, X and Y of one fixed-size dtype; the three
// shapes broadcast numpy-style (Z has the broadcast shape; equal shapes are the plain case). Caffe2's
// `broadcast_on_rows` is not implemented (refused). No gradient.
#pragma once

#include "core/operator.h"
#include "device/broadcast.h"
#include "operators/host_device.h"

namespace hetnet {

template <typename U>
HN_HOST_DEVICE inline void WhereAt(const math::BroadcastIndex& ix, int64_t i, const bool* c, const U* x, const U* y,
                                   U* z) {
  int64_t off[math::kMaxBroadcastInputs];
  math::BroadcastOffsets(ix, i, off);
  z[i] = c[off[0]] ? x[off[1]] : y[off[2]];
}

// z[i] = c ? x : y over the plan (three inputs), moving elements of `itemsize` bytes (1, 2, 4, 8).
template <class Context>
void WhereSelect(const math::BroadcastIndex& ix, int64_t total, size_t itemsize, const bool* c, const void* x,
                 const void* y, void* z, Context* ctx);

// Z's shape (the broadcast of the three); errors name the op, the inputs and their shapes.
std::vector<int64_t> WhereOutputShape(const caffe2::OperatorDef& def, const std::vector<std::vector<int64_t>>& shapes);

template <class Context>
class WhereOp final : public Operator<Context> {
 public:
  WhereOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {
    HN_CHECK_KIND(kUnsupported, this->template GetSingleArgument<int>("broadcast_on_rows", 0) == 0,
                  "Where: broadcast_on_rows=1 is not implemented (numpy broadcasting of C, X, Y is)");
  }
  void RunOnDevice() override {
    // Views: Z may replace X's or Y's blob (in place).
    const Tensor C = this->Input(0), X = this->Input(1), Y = this->Input(2);
    const auto& d = this->def();
    HN_ENFORCE(C.dtype() == DataType::Bool, "Where: input 0 ('", d.input(0), "') is ", DataTypeName(C.dtype()),
               " but bool is required");
    HN_ENFORCE(X.dtype() == Y.dtype(), "Where: input 1 ('", d.input(1), "') is ", DataTypeName(X.dtype()),
               " but input 2 ('", d.input(2), "') is ", DataTypeName(Y.dtype()), "; they must have one dtype");
    HN_CHECK_KIND(kUnsupported, X.dtype() != DataType::String, "Where: string inputs are not supported");
    const std::vector<int64_t> out = WhereOutputShape(d, {C.shape(), X.shape(), Y.shape()});
    const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {C.shape(), X.shape(), Y.shape()});
    Tensor* Z = this->Output(0);
    for (const Tensor* in : {&X, &Y})
      if (Z->SharesStorageWith(*in) && in->shape() != out) *Z = Tensor(Z->device());
    Z = this->Output(0, out, X.dtype());
    WhereSelect<Context>(ix, Z->numel(), X.itemsize(), C.template data<bool>(), X.raw_data(), Y.raw_data(),
                         Z->raw_mutable_data(X.dtype()), &this->context_);
  }
};

}  // namespace hetnet
