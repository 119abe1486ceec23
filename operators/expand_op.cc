#include "operators/expand_op.h"

#include "core/gradient.h"

namespace hetnet {

std::vector<int64_t> ExpandOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                       const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    HN_ENFORCE(d >= 0, def.type(), ": the requested shape ", ShapeToString(shape), " (input 1, '", def.input(1),
               "') has a negative dim");
  std::vector<int64_t> out;
  HN_ENFORCE(math::NumpyBroadcastShape({x, shape}, &out), def.type(), ": input 0 ('", def.input(0),
             "') of shape ", ShapeToString(x), " does not broadcast to the requested shape ", ShapeToString(shape),
             " (input 1, '", def.input(1), "'): aligned from the last dim, each pair must be equal or contain a 1");
  return out;
}

std::vector<int64_t> ReadShapeInput(const caffe2::OperatorDef& def, const Tensor& S, int index) {
  HN_ENFORCE(S.ndim() == 1, def.type(), ": input ", index, " ('", def.input(index), "') must be 1-D, has shape ",
             S.ShapeString());
  if (S.dtype() == DataType::Int64) return {S.data<int64_t>(), S.data<int64_t>() + S.numel()};
  HN_ENFORCE(S.dtype() == DataType::Int32, def.type(), ": input ", index, " ('", def.input(index), "') is ",
             DataTypeName(S.dtype()), " but int64 or int32 is required");
  return {S.data<int32_t>(), S.data<int32_t>() + S.numel()};
}

OPERATOR_SCHEMA(Expand)
    .NumInputs(2)
    .NumOutputs(1)
    .InputsOnCPU({1})
    .SetDoc("Expand(X, shape) -> Y: X broadcast numpy-style against the 1-D int64/int32 `shape` (on CPU); Y's "
            "shape is the broadcast of both (a 1 in shape keeps X's dim). Gradient: ExpandGradient.");
OPERATOR_SCHEMA(ExpandGradient).NumInputs(2).NumOutputs(1).TensorInference(
    [](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[1].dims, DataType::Float)};
    });
REGISTER_CPU_OPERATOR(Expand, ExpandOp<CPUContext>);
REGISTER_CPU_OPERATOR(ExpandGradient, ExpandGradientOp<CPUContext>);

// ExpandGradient(dY, X) -> dX (no gradient for the shape input).
class GetExpandGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp("ExpandGradient", {GO(0), I(0)}, {GI(0)})};
  }
};
REGISTER_GRADIENT(Expand, GetExpandGradient);

}  // namespace hetnet
