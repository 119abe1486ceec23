#include "operators/bitcast_op.h"

#include <cstring>

#include "core/op_schema.h"

namespace hetnet {

BitCastOp::BitCastOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
  const int64_t to = GetSingleArgument<int64_t>("to", -1);
  HN_ENFORCE(IsKnownDataType(static_cast<int>(to)) && static_cast<DataType>(to) != DataType::String, def.type(),
             ": arg to (", to, ") is not a non-string dtype");
  to_ = static_cast<DataType>(to);
}

void BitCastOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() != DataType::String && ItemSize(X.dtype()) == ItemSize(to_), type(), ": X ('", def().input(0),
             "') is ", DataTypeName(X.dtype()), ", which does not have ", DataTypeName(to_),
             "'s bit width (BitCast needs equal widths; strings are refused)");
  Tensor* Y = Output(0, X.sizes(), to_);
  if (X.nbytes() > 0) std::memcpy(Y->raw_mutable_data(to_), X.raw_data(), X.nbytes());
}

OPERATOR_SCHEMA(BitCast).NumInputs(1).NumOutputs(1)
    .SetDoc("ONNX's BitCast: X's bytes as dtype arg to (same element size), same shape. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(BitCast, BitCastOp);

}  // namespace hetnet
