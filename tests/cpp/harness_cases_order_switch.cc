// Harness cases for NHWC2NCHW / NCHW2NHWC (operators/order_switch_ops.h): 3-, 4- and 5-D inputs,
// 4-byte and 8-byte elements (the CPU tiled transpose, with sizes that leave partial 32 x 32 tiles)
// and 1-byte ones (the generic strided copy). Reference: the index permutation written out here.
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {

namespace {

// [N, C, S...] <-> [N, S..., C] by explicit index arithmetic on the flattened spatial dims.
Case OrderSwitch(bool to_nchw, std::vector<int64_t> shape, DataType dtype) {
  std::string label = std::string(to_nchw ? "to NCHW " : "to NHWC ") + DataTypeName(dtype);
  for (auto d : shape) label += " " + std::to_string(d);
  Case c(label);
  if (dtype != DataType::Float) c.NoGrad();
  return c.Def(Op(to_nchw ? "NHWC2NCHW" : "NCHW2NHWC", {"X"}, {"Y"}))
      .Inputs({In(shape, dtype).Range(dtype == DataType::UInt8 ? 0 : -50, 50)})
      .Ref([to_nchw, dtype](const caffe2::OperatorDef&, const RefTensors& in) {
        const RefTensor& X = in[0];
        const int64_t n = X.dim(0), c = to_nchw ? X.dim(-1) : X.dim(1), s = X.numel() / (n * c);
        std::vector<int64_t> y_shape{X.dim(0)};
        if (to_nchw) {
          y_shape.push_back(c);
          y_shape.insert(y_shape.end(), X.shape.begin() + 1, X.shape.end() - 1);
        } else {
          y_shape.insert(y_shape.end(), X.shape.begin() + 2, X.shape.end());
          y_shape.push_back(c);
        }
        RefTensor Y(y_shape, dtype);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < s; ++p) {
              const int64_t nchw = (i * c + ch) * s + p, nhwc = (i * s + p) * c + ch;
              if (to_nchw) Y[nchw] = X[nhwc];
              else Y[nhwc] = X[nchw];
            }
        return RefTensors{Y};
      });
}

}  // namespace

HN_OP_CASES(OrderSwitch) {
  std::vector<Case> out;
  for (bool to_nchw : {false, true}) {
    out.push_back(OrderSwitch(to_nchw, {2, 3, 5}, DataType::Float));
    out.push_back(OrderSwitch(to_nchw, {2, 35, 6, 7}, DataType::Float));   // partial tiles both ways
    out.push_back(OrderSwitch(to_nchw, {1, 3, 40, 33}, DataType::Float));  // an image's 3 channels
    out.push_back(OrderSwitch(to_nchw, {2, 4, 3, 2, 5}, DataType::Float));
    out.push_back(OrderSwitch(to_nchw, {2, 33, 5, 7}, DataType::Int64));
    out.push_back(OrderSwitch(to_nchw, {2, 33, 5, 7}, DataType::Double));
    out.push_back(OrderSwitch(to_nchw, {3, 5, 4, 6}, DataType::Int32));
    out.push_back(OrderSwitch(to_nchw, {2, 5, 3, 4}, DataType::UInt8));
  }
  return out;
}

}  // namespace harness
}  // namespace hetnet
