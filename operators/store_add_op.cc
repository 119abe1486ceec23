#include "operators/store_add_op.h"

#include "core/gradient.h"
#include "operators/store_op_util.h"

namespace hetnet {

StoreAddOp::StoreAddOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      blob_name_(GetSingleArgument<std::string>("blob_name", "")),
      add_value_(GetSingleArgument<int64_t>("add_value", 1)) {
  HN_ENFORCE(!blob_name_.empty(), "StoreAdd: blob_name is a required argument");
}

void StoreAddOp::RunOnDevice() {
  const int64_t value = StoreHandlerInput(*this, 0).Add(blob_name_, add_value_);
  *Output(0, {1}, DataType::Int64)->mutable_data<int64_t>() = value;
}

OPERATOR_SCHEMA(StoreAdd).NumInputs(1).NumOutputs(1)
    .SetDoc("Atomically adds add_value (default 1) to the counter blob_name (required) in the store (input 0); "
            "outputs the new value as an int64 tensor of shape [1].");
REGISTER_CPU_OPERATOR(StoreAdd, StoreAddOp);
NO_GRADIENT(StoreAdd);

}  // namespace hetnet
