// ResizeNearest(X, [scales]) -> Y, Caffe2's: nearest-neighbour resize of an NCHW X by args
// height_scale and width_scale (default 1), or by a 2-element float input [height_scale,
// width_scale] (read on the host, taking precedence as in Caffe2). OH = int(H * height_scale),
// OW = int(W * width_scale); output (y, x) reads input (min(int(y / height_scale), H - 1),
// min(int(x / width_scale), W - 1)). order must be NCHW.
// ResizeNearestGradient(dY, X, [scales]) -> dX: dY summed onto the pixels each output read.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

struct ResizeGeom {
  int64_t nc = 0, h = 0, w = 0, oh = 0, ow = 0;
  float hs = 1.f, ws = 1.f;
};

HN_HOST_DEVICE inline int64_t ResizeSourceOffset(int64_t t, const ResizeGeom& g) {
  const int64_t x = t % g.ow, y = (t / g.ow) % g.oh, c = t / (g.ow * g.oh);
  int64_t sy = static_cast<int64_t>(static_cast<float>(y) / g.hs), sx = static_cast<int64_t>(static_cast<float>(x) / g.ws);
  if (sy > g.h - 1) sy = g.h - 1;
  if (sx > g.w - 1) sx = g.w - 1;
  return (c * g.h + sy) * g.w + sx;
}

template <class Context>
void ResizeNearestForward(const ResizeGeom& g, const float* x, float* y, Context* ctx);
template <class Context>
void ResizeNearestBackward(const ResizeGeom& g, const float* dy, float* dx, Context* ctx);

// Scales from args or the scales input (`scales_input`, -1 for none); X's NCHW shape.
ResizeGeom MakeResizeGeom(OperatorBase* op, const std::vector<int64_t>& x, int scales_input, DeviceContext* ctx);

template <class Context>
class ResizeNearestOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    const ResizeGeom g = MakeResizeGeom(this, X.shape(), this->InputSize() > 1 ? 1 : -1, &this->context_);
    Tensor* Y = this->Output(0, {X.dim(0), X.dim(1), g.oh, g.ow}, DataType::Float);
    ResizeNearestForward<Context>(g, X.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }
};

template <class Context>
class ResizeNearestGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor &dY = this->Input(0), &X = this->Input(1);
    EnforceFloatInput(this->def(), dY, 0);
    const ResizeGeom g = MakeResizeGeom(this, X.shape(), this->InputSize() > 2 ? 2 : -1, &this->context_);
    HN_ENFORCE(dY.shape() == std::vector<int64_t>({X.dim(0), X.dim(1), g.oh, g.ow}), this->type(), ": input 0 ('",
               this->def().input(0), "') has shape ", dY.ShapeString(), " but the resized output has shape ",
               ShapeToString({X.dim(0), X.dim(1), g.oh, g.ow}));
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    ResizeNearestBackward<Context>(g, dY.template data<float>(), dX->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
