#include "operators/shape_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

std::vector<int64_t> ShapeOpOutput(const caffe2::OperatorDef& def, const std::vector<int64_t>& dims) {
  ArgumentHelper args(def);
  if (!args.HasArgument("axes")) return dims;
  const int n = static_cast<int>(dims.size());
  std::vector<int64_t> out;
  for (int64_t a : args.GetRepeatedArgument<int64_t>("axes")) {
    HN_ENFORCE(a >= -n && a < n, def.type(), ": axis ", a, " is out of range for input 0 ('", def.input(0),
               "') of shape ", ShapeToString(dims));
    out.push_back(dims[a < 0 ? a + n : a]);
  }
  return out;
}

OPERATOR_SCHEMA(Shape)
    .NumInputs(1)
    .NumOutputs(1)
    .OutputsOnCPU({0})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{
          TensorInfo::Of({static_cast<int64_t>(ShapeOpOutput(def, in[0].dims).size())}, DataType::Int64)};
    })
    .SetDoc("Shape(data) -> 1-D int64 tensor of data's dims, on CPU for any device. Optional arg `axes`: "
            "only those dims, in that order (negative counts from the end). No gradient.");
NO_GRADIENT(Shape);
REGISTER_CPU_OPERATOR(Shape, ShapeOp<CPUContext>);

}  // namespace hetnet
