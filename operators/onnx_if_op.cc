#include "operators/onnx_if_op.h"

#include "core/gradient.h"
#include "operators/tensor_sequence.h"

namespace hetnet {

namespace {

void CheckBranch(const OperatorBase& op, const OnnxSubgraph& branch) {
  HN_CHECK_KIND(kInvalidArgument, branch.num_outputs() == op.OutputSize(), op.type(), " '", op.def().name(), "': ",
                branch.arg(), " has ", branch.num_outputs(), " outputs, the operator ", op.OutputSize());
}

}  // namespace

OnnxIfOp::OnnxIfOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), then_(*this, ws, "then_net", 1), else_(*this, ws, "else_net", 1) {
  CheckBranch(*this, then_);
  CheckBranch(*this, else_);
}

void OnnxIfOp::RunOnDevice() {
  OnnxSubgraph& branch = ReadOnnxCondition(*this, Input(0), "the condition '" + def().input(0) + "'") ? then_ : else_;
  branch.Run();
  for (int i = 0; i < OutputSize(); ++i) {
    if (const Blob& v = branch.OutputValue(i); !v.IsTensor()) {  // a sequence or an empty optional
      CopyOnnxValue(v, OutputBlob(i));
      continue;
    }
    const Tensor& t = branch.Output(i);
    Tensor* y = Output(i);
    if (y != &t) y->CopyFrom(t);
  }
}

OPERATOR_SCHEMA(OnnxIf)
    .NumInputs(1, 1 << 30)
    .NumOutputs(1, 1 << 30)
    .SetDoc("ONNX If: runs the NetDef argument then_net or else_net (by the bool cond) in a child workspace "
            "and copies its outputs out; the other inputs are the outer blobs the branches read.");
REGISTER_CPU_OPERATOR(OnnxIf, OnnxIfOp);
NO_GRADIENT(OnnxIf);

}  // namespace hetnet
