// ZeroGradient(X) -> (), Caffe2's: does nothing when run; in the backward pass it gives X a zero
// gradient (ConstantFill shaped like X, value 0), so that an output nothing downstream uses still
// has the gradient its producer's gradient needs (e.g. the second piece of a Split, the cell of an
// LSTM step). Autodiff differentiates operators without outputs that have a gradient maker.
#include "core/gradient.h"
#include "core/operator.h"

namespace hetnet {
namespace {

class ZeroGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {}
};

class GetZeroGradientGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    caffe2::OperatorDef fill = GradientOp("ConstantFill", {I(0)}, {GI(0)});
    auto* value = fill.add_arg();
    value->set_name("value");
    value->set_f(0.0f);
    return {fill};
  }
};

}  // namespace

OPERATOR_SCHEMA(ZeroGradient)
    .NumInputs(1)
    .NumOutputs(0)
    .SetDoc("ZeroGradient(X): no-op forward; the backward pass gives X a zero gradient (ConstantFill like X).");
REGISTER_CPU_OPERATOR(ZeroGradient, ZeroGradientOp);
REGISTER_GRADIENT(ZeroGradient, GetZeroGradientGradient);

}  // namespace hetnet
