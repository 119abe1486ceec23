#include "operators/store_wait_op.h"

#include "core/gradient.h"
#include "operators/store_op_util.h"

namespace hetnet {

StoreWaitOp::StoreWaitOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      blob_names_(GetRepeatedArgument<std::string>("blob_names")),
      timeout_(StoreTimeoutArgument(*this)) {}

void StoreWaitOp::RunOnDevice() {
  StoreHandler& store = StoreHandlerInput(*this, 0);
  if (InputSize() == 1) {
    store.Wait(blob_names_, timeout_);
    return;
  }
  HN_ENFORCE(blob_names_.empty(), "StoreWait: give the names either as input 1 or as arg blob_names, not both");
  const Tensor& names = Input(1);
  HN_ENFORCE(names.dtype() == DataType::String, "StoreWait: input 1 ('", def().input(1),
             "') must be a string tensor of names, got ", DataTypeName(names.dtype()));
  const std::string* p = names.data<std::string>();
  store.Wait(std::vector<std::string>(p, p + names.numel()), timeout_);
}

OPERATOR_SCHEMA(StoreWait).NumInputs(1, 2).NumOutputs(0)
    .SetDoc("Waits until every name is set in the store (input 0). Names: input 1 (a string tensor) or arg "
            "blob_names. Arg timeout_ms (default 30000, 0: no timeout).");
REGISTER_CPU_OPERATOR(StoreWait, StoreWaitOp);
NO_GRADIENT(StoreWait);

}  // namespace hetnet
