#include "operators/msra_fill_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

OPERATOR_SCHEMA(MSRAFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      // Without an input the shape comes from the args alone; with one it needs the input's values
      // or shape at run time.
      if (!in.empty()) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      return std::vector<TensorInfo>{TensorInfo::Of(FillerOutputShape(def, nullptr), DataType::Float)};
    })
    .DeviceInference(FillerDevices)
    .SetDoc("MSRAFill: normal floats, mean 0, std sqrt(2 / fan_out) with fan_out = numel / dims[1]; shape args "
            "(shape, extra_shape, input_as_shape) as the other fills.");
REGISTER_CPU_OPERATOR(MSRAFill, MSRAFillOp<CPUContext>);
NO_GRADIENT(MSRAFill);

}  // namespace hetnet
