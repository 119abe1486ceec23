// OnnxIf(cond, outer...) -> (outputs...): ONNX's If. cond is a one-element bool tensor; the NetDef
// argument then_net (cond true) or else_net runs in a child workspace (operators/onnx_subgraph.h)
// and its external outputs are copied to the operator's outputs, which both branches must match in
// number. outer...: the outer blobs the branches read (arg outer_inputs). CPU only; no gradient.
#pragma once

#include "core/operator.h"
#include "operators/onnx_subgraph.h"

namespace hetnet {

class OnnxIfOp final : public Operator<CPUContext> {
 public:
  OnnxIfOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  OnnxSubgraph then_, else_;
};

}  // namespace hetnet
