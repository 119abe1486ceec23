// CastConstant: Cast for weights. Y = X converted to dtype `to`, as Cast, but the conversion runs
// again only when X may have changed since the last one (another storage, write generation or
// shape, or storage hetnet does not own) or something else wrote Y; otherwise a run costs a few
// comparisons. Inserted by the reduced-precision rewrite (core/reduced_precision.h) before the
// narrow operators that read a weight, so weights fed or trained after the net was created are seen.
// CPU kernel in cast_constant_op.cc, CUDA in cast_constant_op_cuda.cc: both run the device's Cast.
#pragma once

#include <memory>

#include "core/operator.h"
#include "operators/tensor_version.h"

namespace hetnet {

template <class Context>
class CastConstantOp final : public Operator<Context> {
 public:
  CastConstantOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {
    caffe2::OperatorDef cast = def;
    cast.set_type("Cast");
    cast_ = CreateOperator(cast, ws);
  }

  void RunOnDevice() override {
    const Blob* y = this->OutputBlob(0);
    if (input_seen_.Holds(this->Input(0)) && y->IsTensor() && output_seen_.Same(TensorVersion::Of(y->GetTensor())))
      return;
    cast_->Run();
    input_seen_ = TensorVersion::Of(this->Input(0));
    output_seen_ = TensorVersion::Of(this->OutputBlob(0)->GetTensor());
  }

 private:
  std::unique_ptr<OperatorBase> cast_;  // the Cast kernel, run when the input changed
  TensorVersion input_seen_, output_seen_;
};

}  // namespace hetnet
