#include "operators/slice_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

namespace {
std::vector<int64_t> ReadIndexVector(const caffe2::OperatorDef& def, const Tensor& t, int index) {
  HN_ENFORCE(t.ndim() == 1, def.type(), ": input ", index, " ('", def.input(index), "') must be 1-D, has shape ",
             t.ShapeString());
  if (t.dtype() == DataType::Int64) return {t.data<int64_t>(), t.data<int64_t>() + t.numel()};
  HN_ENFORCE(t.dtype() == DataType::Int32, def.type(), ": input ", index, " ('", def.input(index), "') is ",
             DataTypeName(t.dtype()), " but int32 or int64 is required");
  return {t.data<int32_t>(), t.data<int32_t>() + t.numel()};
}
}  // namespace

void ReadSliceBounds(const caffe2::OperatorDef& def, const Tensor* S, const Tensor* E, int first,
                     std::vector<int64_t>* starts, std::vector<int64_t>* ends) {
  ArgumentHelper args(def);
  if (S) {
    HN_ENFORCE(!args.HasArgument("starts") && !args.HasArgument("ends"), def.type(),
               ": give starts/ends either as arguments or as inputs, not both");
    *starts = ReadIndexVector(def, *S, first);
    *ends = ReadIndexVector(def, *E, first + 1);
  } else {
    *starts = args.GetRepeatedArgument<int64_t>("starts");
    *ends = args.GetRepeatedArgument<int64_t>("ends");
  }
}

SlicePlan MakeSlicePlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& in,
                        const std::vector<int64_t>& starts, const std::vector<int64_t>& ends) {
  const int nd = static_cast<int>(in.size());
  HN_ENFORCE(starts.size() == ends.size(), def.type(), ": starts ", ShapeToString(starts), " and ends ",
             ShapeToString(ends), " differ in length");
  HN_ENFORCE(starts.size() <= in.size(), def.type(), ": ", starts.size(), " starts/ends for input 0 ('",
             def.input(0), "') of shape ", ShapeToString(in), " (at most one per dim)");
  SlicePlan p;
  p.out_shape = in;
  std::vector<int64_t> begin(nd, 0), stride(nd, 1);
  for (int d = nd - 2; d >= 0; --d) stride[d] = stride[d + 1] * in[d + 1];
  for (size_t d = 0; d < starts.size(); ++d) {
    const int64_t n = in[d];
    int64_t s = starts[d], e = ends[d];
    if (s < 0) s += n + 1;
    if (e < 0) e += n + 1;
    s = std::min(s, n);
    e = std::min(e, n);
    HN_ENFORCE(s >= 0 && e >= 0 && s <= e, def.type(), ": dim ", d, " of input 0 ('", def.input(0), "') of shape ",
               ShapeToString(in), ": start ", starts[d], " and end ", ends[d], " give [", s, ", ", e,
               ") (a negative v means dim + 1 + v)");
    begin[d] = s;
    p.out_shape[d] = e - s;
  }
  // Merge dims into strided runs: a dim kept whole continues its outer neighbour's run.
  std::vector<int64_t> dims, strides;
  for (int d = 0; d < nd; ++d) {
    p.base += begin[d] * stride[d];
    if (p.out_shape[d] == 1) continue;
    if (!dims.empty() && p.out_shape[d] == in[d] && strides.back() == in[d] * stride[d]) {
      dims.back() *= in[d];
      strides.back() = stride[d];
    } else {
      dims.push_back(p.out_shape[d]);
      strides.push_back(stride[d]);
    }
  }
  HN_CHECK_KIND(kUnsupported, dims.size() <= static_cast<size_t>(math::kMaxBroadcastDims), def.type(),
                ": the slice of ", ShapeToString(in), " needs ", dims.size(), " strided dims; at most ",
                math::kMaxBroadcastDims, " are supported");
  p.ix.ndim = static_cast<int>(dims.size());
  p.ix.num_inputs = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    p.ix.dims[d] = dims[d];
    p.ix.strides[0][d] = strides[d];
  }
  return p;
}

OPERATOR_SCHEMA(Slice)
    .NumInputs(1, 3)
    .NumOutputs(1)
    .InputsOnCPU({1, 2})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out(1);
      ArgumentHelper args(def);
      if (def.input_size() == 1)
        out[0] = TensorInfo::Of(MakeSlicePlan(def, in[0].dims, args.GetRepeatedArgument<int64_t>("starts"),
                                              args.GetRepeatedArgument<int64_t>("ends")).out_shape,
                                in[0].dtype);
      return out;
    })
    .SetDoc("Slice(data[, starts, ends]) -> data[starts[i]:ends[i]] on each leading dim i (args or 1-D int "
            "inputs on CPU). Negative v means dim + 1 + v (-1: the end); values past the dim are clamped. "
            "Gradient: SliceGradient.");
OPERATOR_SCHEMA(SliceGradient)
    .NumInputs(2, 4)
    .NumOutputs(1)
    .DeviceInference([](const caffe2::OperatorDef& def, Device d) {  // starts, ends on CPU in the 4-input form
      std::vector<Device> in(def.input_size(), d);
      if (def.input_size() == 4) in[1] = in[2] = Device::CPU();
      return std::make_pair(in, std::vector<Device>(def.output_size(), d));
    })
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, in.back().dtype)};
    });
REGISTER_CPU_OPERATOR(Slice, SliceOp<CPUContext>);
REGISTER_CPU_OPERATOR(SliceGradient, SliceGradientOp<CPUContext>);

// Caffe2's: SliceGradient(data, starts, ends, dOutput) or (data, dOutput) with the forward's args.
class GetSliceGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    caffe2::OperatorDef op = Def().input_size() > 1 ? GradientOp("SliceGradient", {I(0), I(1), I(2), GO(0)}, {GI(0)})
                                                    : GradientOp("SliceGradient", {I(0), GO(0)}, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
REGISTER_GRADIENT(Slice, GetSliceGradient);

}  // namespace hetnet
