// Harness cases for NCHWToBlocked / BlockedToNCHW (operators/blocked_layout_ops.h): blocks of 8 and
// 16, one and several images, 4- and 8-byte elements. Reference: the nChw<b>c index written out.
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {

namespace {

Case BlockedLayout(bool to_blocked, int block, std::vector<int64_t> shape, DataType dtype) {
  std::string label = std::string(to_blocked ? "to blocked " : "to NCHW ") + std::to_string(block) + " " +
                      DataTypeName(dtype);
  for (auto d : shape) label += " " + std::to_string(d);
  Case c(label);
  if (dtype != DataType::Float) c.NoGrad();
  return c.Def(Op(to_blocked ? "NCHWToBlocked" : "BlockedToNCHW", {"X"}, {"Y"}, {Arg("channel_block", block)}))
      .Inputs({In(shape, dtype).Range(-50, 50)})
      .Ref([to_blocked, block, dtype](const caffe2::OperatorDef&, const RefTensors& in) {
        const RefTensor& X = in[0];
        const int64_t n = X.dim(0), ch = X.dim(1), s = X.dim(2) * X.dim(3);
        RefTensor Y(X.shape, dtype);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t c = 0; c < ch; ++c)
            for (int64_t p = 0; p < s; ++p) {
              const int64_t nchw = (i * ch + c) * s + p, blocked = ((i * (ch / block) + c / block) * s + p) * block + c % block;
              if (to_blocked) Y[blocked] = X[nchw];
              else Y[nchw] = X[blocked];
            }
        return RefTensors{Y};
      });
}

}  // namespace

HN_OP_CASES(BlockedLayout) {
  std::vector<Case> out;
  for (bool to_blocked : {true, false})
    for (int block : {8, 16}) {
      out.push_back(BlockedLayout(to_blocked, block, {1, 16, 5, 7}, DataType::Float));
      out.push_back(BlockedLayout(to_blocked, block, {2, 32, 9, 6}, DataType::Float));  // partial 32 x 32 tiles
      out.push_back(BlockedLayout(to_blocked, block, {2, 16, 3, 3}, DataType::Double));
    }
  return out;
}

}  // namespace harness
}  // namespace hetnet
