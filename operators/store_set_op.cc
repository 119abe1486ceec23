#include "operators/store_set_op.h"

#include "core/blob_serialization.h"
#include "core/gradient.h"
#include "operators/store_op_util.h"

namespace hetnet {

StoreSetOp::StoreSetOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), blob_name_(GetSingleArgument<std::string>("blob_name", def.input(1))) {}

void StoreSetOp::RunOnDevice() {
  StoreHandler& store = StoreHandlerInput(*this, 0);
  std::string bytes;
  try {
    bytes = SerializeBlob(*InputBlob(1), blob_name_);
  } catch (Error& e) {
    throw e.AddContext("StoreSet: input 1 ('" + def().input(1) + "')");
  }
  store.Set(blob_name_, bytes);
}

OPERATOR_SCHEMA(StoreSet).NumInputs(2).NumOutputs(0)
    .SetDoc("Publishes blob `data` (input 1) in the store (input 0) under arg blob_name (default: the input's "
            "name). The value is the serialized BlobProto; keys are set once.");
REGISTER_CPU_OPERATOR(StoreSet, StoreSetOp);
NO_GRADIENT(StoreSet);

}  // namespace hetnet
