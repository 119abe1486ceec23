// CastConstant: Cast for weights. Y = X converted to dtype `to`, as Cast, but the conversion runs
// again only when X may have changed since the last one (another storage, write generation or
// shape, or storage hetnet does not own) or something else wrote Y; otherwise a run costs a few
// comparisons. Inserted by the reduced-precision rewrite (core/reduced_precision.h) before the
// narrow operators that read a weight, so weights fed or trained after the net was created are seen.
#pragma once

#include <memory>

#include "core/operator.h"
#include "operators/tensor_version.h"

namespace hetnet {

class CastConstantOp final : public Operator<CPUContext> {
 public:
  CastConstantOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::unique_ptr<OperatorBase> cast_;  // the Cast kernel, run when the input changed
  TensorVersion input_seen_, output_seen_;
};

}  // namespace hetnet
