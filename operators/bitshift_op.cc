#include "operators/bitshift_op.h"

#include "device/broadcast.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

BitShiftOp::BitShiftOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
  const std::string d = GetSingleArgument<std::string>("direction", "");
  HN_ENFORCE(d == "LEFT" || d == "RIGHT", def.type(), ": argument `direction` must be LEFT or RIGHT, not '", d, "'");
  left_ = d == "LEFT";
}

void BitShiftOp::RunOnDevice() {
  const Tensor &X = Input(0), &Y = Input(1);
  const auto& d = def();
  HN_ENFORCE(X.dtype() == Y.dtype(), type(), ": input 0 ('", d.input(0), "') is ", DataTypeName(X.dtype()),
             " but input 1 ('", d.input(1), "') is ", DataTypeName(Y.dtype()), "; they must have one dtype");
  std::vector<int64_t> out;
  HN_ENFORCE(math::NumpyBroadcastShape({X.shape(), Y.shape()}, &out), type(), ": ",
             math::DescribeShapes({d.input(0), d.input(1)}, {X.shape(), Y.shape()}),
             " do not broadcast (numpy rule: aligned from the last dim, each dim equal or 1)");
  const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {X.shape(), Y.shape()});
  Tensor* Z = Output(0, out, X.dtype());
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* x = X.template data<T>();
    const T* y = Y.template data<T>();
    T* z = Z->template mutable_data<T>();
    int64_t off[math::kMaxBroadcastInputs];
    for (int64_t i = 0; i < Z->numel(); ++i) {
      math::BroadcastOffsets(ix, i, off);
      z[i] = BitShiftOne<T>(x[off[0]], y[off[1]], left_);
    }
  };
  DispatchIntegerType(d, X.dtype(), 0, run);
}

OPERATOR_SCHEMA(BitShift)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(NumpyBroadcastInference)
    .SetDoc("BitShift(X, Y) -> Z: X << Y (direction LEFT) or X >> Y (RIGHT), integer dtypes, numpy broadcasting; "
            "shifts < 0 or >= the bit width give 0 (-1 for a right shift of a negative X).");
REGISTER_CPU_OPERATOR(BitShift, BitShiftOp);

}  // namespace hetnet
