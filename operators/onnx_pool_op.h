// OnnxPool(X) -> Y[, Indices]: ONNX's MaxPool / AveragePool / LpPool over any number of spatial dims
// (X is [N, C, D1, ..., Dk], k >= 1), for the forms our 2-D NCHW pools lack: 3-D and up, dilations,
// every ceil_mode combination, MaxPool's Indices output and storage_order, integer inputs. CPU only;
// no gradient. Args: mode ("max", "avg", "lp"), kernel_shape (required), strides, dilations (default
// 1s), pads ([begins..., ends...], default 0s), auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER),
// ceil_mode, count_include_pad (avg, lp), p (lp, default 2), storage_order (max: 1 numbers Indices
// column-major over the spatial dims).
// As ONNX's reference: output size floor (ceil with ceil_mode, less one when the last window would
// start in the end padding) of (D + pads - dilated kernel) / stride + 1; a window's taps past
// D + end pad are dropped; max and count_include_pad=0 use the taps inside X, count_include_pad=1
// counts the padding taps as zeros. Indices are row-major offsets into X (N and C included).
// Max takes float16/32/64, int8, uint8, int32; avg and lp float16/32/64 (computed in double).
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

// One spatial dim of an ONNX pool or conv window: the output size, the begin pad in effect, and the
// first input coordinate past the end pad (taps there are dropped). auto_pad NOTSET, VALID, SAME_UPPER
// or SAME_LOWER; `ceil` is ceil_mode (NOTSET only). `op` and `dim` name the input in errors.
struct WindowDim {
  int64_t out = 0, pad_begin = 0, limit = 0;
};
WindowDim ComputeWindowDim(const OperatorBase& op, int dim, int64_t in, int64_t kernel, int64_t stride,
                           int64_t dilation, int64_t pad_begin, int64_t pad_end, const std::string& auto_pad,
                           bool ceil);

class OnnxPoolOp final : public Operator<CPUContext> {
 public:
  OnnxPoolOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  enum class Mode { kMax, kAvg, kLp } mode_;
  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  std::string auto_pad_;
  bool ceil_, include_pad_, column_major_;
  double p_;
};

}  // namespace hetnet
