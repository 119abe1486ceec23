#include "operators/given_tensor_fill_ops.h"

#include "core/gradient.h"

namespace hetnet {

namespace {
OpSchema::ShapeFn GivenShape(DataType dt) {
  return [dt](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
    ArgumentHelper args(def);
    std::vector<int64_t> shape;
    if (in.empty()) {
      shape = args.GetRepeatedArgument<int64_t>("shape");
    } else {
      if (args.GetSingleArgument<int>("input_as_shape", 0)) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      shape = in[0].dims;
      for (int64_t d : args.GetRepeatedArgument<int64_t>("extra_shape")) shape.push_back(d);
    }
    return std::vector<TensorInfo>{TensorInfo::Of(shape, dt)};
  };
}
}  // namespace

#define HN_GIVEN_FILL(Name, T, DT)                                                                  \
  OPERATOR_SCHEMA(Name).NumInputs(0, 1).NumOutputs(1).AllowInplace({{0, 0}})                      \
      .TensorInference(GivenShape(DataType::DT)).DeviceInference(FillerDevices)                                                \
      .SetDoc("Fills with the given `values` (" #T ") in `shape`.");                              \
  REGISTER_CPU_OPERATOR(Name, GivenTensorFillOp<CPUContext, T>);                                  \
  NO_GRADIENT(Name);

HN_GIVEN_FILL(GivenTensorFill, float, Float)
HN_GIVEN_FILL(GivenTensorDoubleFill, double, Double)
HN_GIVEN_FILL(GivenTensorIntFill, int32_t, Int32)
HN_GIVEN_FILL(GivenTensorInt64Fill, int64_t, Int64)
HN_GIVEN_FILL(GivenTensorBoolFill, bool, Bool)
HN_GIVEN_FILL(GivenTensorStringFill, std::string, String)
#undef HN_GIVEN_FILL

}  // namespace hetnet
