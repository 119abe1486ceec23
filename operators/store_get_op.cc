#include "operators/store_get_op.h"

#include "core/blob_serialization.h"
#include "core/gradient.h"
#include "operators/store_op_util.h"

namespace hetnet {

StoreGetOp::StoreGetOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      blob_name_(GetSingleArgument<std::string>("blob_name", def.output(0))),
      timeout_(StoreTimeoutArgument(*this)) {}

void StoreGetOp::RunOnDevice() {
  StoreHandler& store = StoreHandlerInput(*this, 0);
  const std::string bytes = store.Get(blob_name_, timeout_);
  DeserializeBlob(bytes, OutputBlob(0), "StoreGet: key '" + blob_name_ + "' of " + store.Describe());
}

OPERATOR_SCHEMA(StoreGet).NumInputs(1).NumOutputs(1)
    .SetDoc("Waits for key blob_name (default: the output's name) in the store (input 0) and deserializes it "
            "into the output. Arg timeout_ms (default 30000, 0: no timeout).");
REGISTER_CPU_OPERATOR(StoreGet, StoreGetOp);
NO_GRADIENT(StoreGet);

}  // namespace hetnet
