#include "operators/cast_constant_op.h"

#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/cast_ops.h"

namespace hetnet {

CastConstantOp::CastConstantOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
  caffe2::OperatorDef cast = def;
  cast.set_type("Cast");
  cast_ = CreateOperator(cast, ws);
}

void CastConstantOp::RunOnDevice() {
  const Blob* y = OutputBlob(0);
  if (input_seen_.Holds(Input(0)) && y->IsTensor() && output_seen_.Same(TensorVersion::Of(y->GetTensor()))) return;
  cast_->Run();
  input_seen_ = TensorVersion::Of(Input(0));
  output_seen_ = TensorVersion::Of(OutputBlob(0)->GetTensor());
}

OPERATOR_SCHEMA(CastConstant)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, CastDataTypeArg(def, "to"))};
    })
    .SetDoc("Y = X converted to dtype `to` (as Cast), again only when X changed: weights converted for "
            "reduced-precision inference (core/reduced_precision.h).");
REGISTER_CPU_OPERATOR(CastConstant, CastConstantOp);
NO_GRADIENT(CastConstant);

}  // namespace hetnet
