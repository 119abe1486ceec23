// Col2Im(X, image_shape, block_shape) -> Y: ONNX's Col2Im, the inverse of im2col with overlaps summed.
// X [N, C * prod(block), L] (rows: channel-major, then block positions row-major; columns: block
// positions on the sliding grid, row-major); image_shape and block_shape: 1-D int64, one value per
// spatial dim; args dilations, pads ([begins..., ends...]), strides as for convolution. Y
// [N, C, image...]; L must equal the grid's size. float32/64. CPU only; no gradient.
#pragma once

#include "core/operator.h"

namespace hetnet {

class Col2ImOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
