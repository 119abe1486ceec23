// ConvTranspose over any number of spatial dims (CPU): the forms conv_transpose_op.h's 2-D im2col kernel does not
// run (a `kernels` argument with other than 2 values: 3-D and up, as ONNX's ConvTranspose imports them). X [N, C,
// D1..Dk], filter [C, M/group, K1..Kk], bias [M] -> Y [N, M, O1..Ok] with, per dim,
//   O = (D - 1) * stride + dilation * (K - 1) + 1 + adj - pad_begin - pad_end
// Args: kernels, strides, dilations, adjs (k values each), pads (2k: begins then ends, ONNX's order), group,
// legacy_pad (VALID or SAME: pads 0). Every input element scatters through its filter slice (plain loops).
#pragma once

#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

struct ConvTransposeNdGeom {
  int64_t N = 0, C = 0, M = 0, group = 1;
  std::vector<int64_t> in, out, kernel, stride, dilation, pad_begin;
  std::vector<int64_t> y_shape() const;
};

// Whether def is the N-D form: its `kernels` argument has other than 2 values.
bool IsConvTransposeNd(const caffe2::OperatorDef& def);

// The geometry for X's shape x, filter w and optional bias b; kInvalidArgument naming the op and blobs.
ConvTransposeNdGeom ComputeConvTransposeNdGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                               const std::vector<int64_t>& w, const std::vector<int64_t>* b);

// y (overwritten) = ConvTranspose(x, w) + bias (b may be null).
void ConvTransposeNdCpu(const ConvTransposeNdGeom& g, const float* x, const float* w, const float* b, float* y);

}  // namespace hetnet
