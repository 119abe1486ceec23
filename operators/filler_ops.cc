#include "operators/filler_ops.h"

#include "core/checked_size.h"
#include "core/gradient.h"

namespace hetnet {

std::vector<int64_t> FillerOutputShape(const caffe2::OperatorDef& def, const Tensor* input) {
  ArgumentHelper args(def);
  const bool input_as_shape = args.GetSingleArgument<int>("input_as_shape", 0) != 0;
  std::vector<int64_t> shape;
  if (!input) {
    HN_ENFORCE(!input_as_shape, def.type(), ": input_as_shape=1 needs an input holding the shape");
    HN_ENFORCE(!args.HasArgument("extra_shape"), def.type(), ": extra_shape is only valid with an input");
    shape = args.GetRepeatedArgument<int64_t>("shape");
  } else {
    HN_ENFORCE(!args.HasArgument("shape"), def.type(), ": give either argument 'shape' or input 0 ('", def.input(0),
               "'), not both");
    if (input_as_shape) {
      HN_ENFORCE(input->ndim() == 1, def.type(), ": with input_as_shape=1 input 0 ('", def.input(0),
                 "') must be 1-D, has shape ", input->ShapeString());
      if (input->dtype() == DataType::Int64) {
        shape.assign(input->data<int64_t>(), input->data<int64_t>() + input->numel());
      } else {
        HN_ENFORCE(input->dtype() == DataType::Int32, def.type(), ": with input_as_shape=1 input 0 ('", def.input(0),
                   "') must be int64 or int32, is ", DataTypeName(input->dtype()));
        shape.assign(input->data<int32_t>(), input->data<int32_t>() + input->numel());
      }
    } else {
      shape = input->shape();
    }
    for (int64_t d : args.GetRepeatedArgument<int64_t>("extra_shape")) shape.push_back(d);
  }
  for (int64_t d : shape)
    HN_ENFORCE(d >= 0, def.type(), ": negative dim in output shape ", ShapeToString(shape), " for '", def.output(0), "'");
  // The element count is checked here, so every product of these dims (GivenTensorFill's count
  // check, the fill loops) is exact.
  CheckedNumel(shape, (def.type() + ": output '" + def.output(0) + "'").c_str());
  return shape;
}

namespace {
// Shape inference shared by the fills: with input_as_shape the shape is data, so unknown.
OpSchema::ShapeFn FillerShape(DataType fixed) {
  return [fixed](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
    ArgumentHelper args(def);
    DataType dt = fixed;
    if (dt == DataType::Undefined)
      dt = static_cast<DataType>(args.GetSingleArgument<int>("dtype", static_cast<int>(DataType::Float)));
    if (args.GetSingleArgument<int>("input_as_shape", 0)) return std::vector<TensorInfo>{TensorInfo::Unknown()};
    std::vector<int64_t> shape;
    if (in.empty()) {
      shape = args.GetRepeatedArgument<int64_t>("shape");
    } else {
      shape = in[0].dims;
      for (int64_t d : args.GetRepeatedArgument<int64_t>("extra_shape")) shape.push_back(d);
    }
    return std::vector<TensorInfo>{TensorInfo::Of(shape, dt)};
  };
}
}  // namespace

std::pair<std::vector<Device>, std::vector<Device>> FillerDevices(const caffe2::OperatorDef& def, Device d) {
  std::vector<Device> in(def.input_size(), d);
  if (!in.empty() && ArgumentHelper(def).GetSingleArgument<int>("input_as_shape", 0)) in[0] = Device::CPU();
  return {in, std::vector<Device>(def.output_size(), d)};
}

OPERATOR_SCHEMA(ConstantFill).NumInputs(0, 1).NumOutputs(1).AllowInplace({{0, 0}})
    .TensorInference(FillerShape(DataType::Undefined)).DeviceInference(FillerDevices)
    .SetDoc("Fills with `value` (arg dtype, a TensorProto.DataType; default float).");
OPERATOR_SCHEMA(UniformFill).NumInputs(0, 1).NumOutputs(1).AllowInplace({{0, 0}})
    .TensorInference(FillerShape(DataType::Float)).DeviceInference(FillerDevices)
    .SetDoc("Uniform floats in [min, max).");
OPERATOR_SCHEMA(GaussianFill).NumInputs(0, 1).NumOutputs(1).AllowInplace({{0, 0}})
    .TensorInference(FillerShape(DataType::Float)).DeviceInference(FillerDevices)
    .SetDoc("Normal floats with `mean` and `std`.");
OPERATOR_SCHEMA(XavierFill).NumInputs(0, 1).NumOutputs(1).AllowInplace({{0, 0}})
    .TensorInference(FillerShape(DataType::Float)).DeviceInference(FillerDevices)
    .SetDoc("Uniform in +-sqrt(3 / fan_in), fan_in = numel / dim 0.");

REGISTER_CPU_OPERATOR(ConstantFill, ConstantFillOp<CPUContext>);
REGISTER_CPU_OPERATOR(UniformFill, RandomFillOp<CPUContext, RandomFill::Uniform>);
REGISTER_CPU_OPERATOR(GaussianFill, RandomFillOp<CPUContext, RandomFill::Gaussian>);
REGISTER_CPU_OPERATOR(XavierFill, RandomFillOp<CPUContext, RandomFill::Xavier>);

NO_GRADIENT(ConstantFill);
NO_GRADIENT(UniformFill);
NO_GRADIENT(GaussianFill);
NO_GRADIENT(XavierFill);

}  // namespace hetnet
