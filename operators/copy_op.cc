#include "operators/copy_op.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

OPERATOR_SCHEMA(Copy).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().AllowInplace({{0, 0}})
    .SetDoc("Y = X, on the op's device; on a GPU the input may live on any GPU.");
OPERATOR_SCHEMA(CopyCPUToGPU).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().InputsOnCPU({0}).NoCPUFallback()
    .SetDoc("Copies a CPU tensor to the op's GPU through pinned staging, asynchronously on the op's stream.");
OPERATOR_SCHEMA(CopyGPUToCPU).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().OutputsOnCPU({0}).NoCPUFallback()
    .SetDoc("Copies a tensor on the op's GPU into pinned host memory; CPU readers see it when the op returns.");

// Bytes only; a cross-device copy's time comes from the profile's link, not the device.
REGISTER_OP_COST(Copy, ElementwiseCostFn(0));
REGISTER_OP_COST(CopyCPUToGPU, ElementwiseCostFn(0));
REGISTER_OP_COST(CopyGPUToCPU, ElementwiseCostFn(0));

REGISTER_CPU_OPERATOR(Copy, CPUCopyOp);
REGISTER_CPU_OPERATOR(CopyCPUToGPU, CPUCopyOp);
REGISTER_CPU_OPERATOR(CopyGPUToCPU, CPUCopyOp);

namespace {
template <const char* kGradType>
class GetCopyGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp(kGradType, {GO(0)}, {GI(0)})};
  }
};
constexpr char kCopy[] = "Copy";
constexpr char kToCPU[] = "CopyGPUToCPU";
constexpr char kToGPU[] = "CopyCPUToGPU";
}  // namespace

REGISTER_GRADIENT(Copy, GetCopyGradient<kCopy>);
REGISTER_GRADIENT(CopyCPUToGPU, GetCopyGradient<kToCPU>);
REGISTER_GRADIENT(CopyGPUToCPU, GetCopyGradient<kToGPU>);

}  // namespace hetnet
