#include "operators/gather_elements_op.h"

#include <cstring>

#include "operators/cnn_op_utils.h"

namespace hetnet {

namespace {
int CheckShapes(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, const std::vector<int64_t>& idx) {
  const int nd = static_cast<int>(x.size());
  HN_ENFORCE(nd >= 1, def.type(), ": input 0 ('", def.input(0), "') must have at least one dim");
  const int axis = CanonicalAxisFor(def, ArgumentHelper(def).GetSingleArgument<int>("axis", 0), nd, 0);
  HN_ENFORCE(static_cast<int>(idx.size()) == nd, def.type(), ": input 1 ('", def.input(1), "') has shape ",
             ShapeToString(idx), " but must have the rank of input 0 ('", def.input(0), "'), ", ShapeToString(x));
  for (int d = 0; d < nd; ++d)
    HN_ENFORCE(d == axis || idx[d] <= x[d], def.type(), ": input 1 ('", def.input(1), "') of shape ",
               ShapeToString(idx), " is larger than input 0 ('", def.input(0), "') of shape ", ShapeToString(x),
               " in dim ", d);
  return axis;
}
}  // namespace

void GatherElementsOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& I = Input(1);
  const int axis = CheckShapes(def(), X.shape(), I.shape());
  HN_ENFORCE(I.dtype() == DataType::Int32 || I.dtype() == DataType::Int64, type(), ": input 1 ('", def().input(1),
             "') is ", DataTypeName(I.dtype()), " but int32 or int64 is required");
  HN_ENFORCE(X.dtype() != DataType::String, type(), ": input 0 ('", def().input(0), "') is string (unsupported)");
  Tensor* Y = Output(0, I.shape(), X.dtype());
  const size_t item = X.itemsize();
  const auto* x = static_cast<const char*>(X.raw_data());
  auto* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  const std::vector<int64_t> xst = RowMajorStrides(X.shape());
  const int nd = static_cast<int>(X.ndim());
  const int64_t s = X.dim(axis);
  for (int64_t o = 0; o < I.numel(); ++o) {
    int64_t k = I.dtype() == DataType::Int64 ? I.data<int64_t>()[o] : I.data<int32_t>()[o];
    HN_ENFORCE(k >= -s && k < s, type(), ": input 1 ('", def().input(1), "') holds ", k, " at position ", o,
               ", outside [", -s, ", ", s, ") for dim ", axis, " of input 0 ('", def().input(0), "')");
    if (k < 0) k += s;
    int64_t rem = o, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t c = rem % I.dim(d);
      rem /= I.dim(d);
      off += (d == axis ? k : c) * xst[d];
    }
    std::memcpy(y + o * item, x + off * item, item);
  }
}

OPERATOR_SCHEMA(GatherElements)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      CheckShapes(def, in[0].dims, in[1].dims);
      return std::vector<TensorInfo>{TensorInfo::Of(in[1].dims, in[0].dtype)};
    })
    .SetDoc("ONNX GatherElements along arg `axis` (default 0): Y[..i..] = X[..indices[..i..]..].");

REGISTER_CPU_OPERATOR(GatherElements, GatherElementsOp);

}  // namespace hetnet
