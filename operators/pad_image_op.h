// PadImage(X) -> Y, Caffe2's: pads the H and W dims of an NCHW X. Pads in Caffe2's forms (pad |
// pad_t, pad_l, pad_b, pad_r | pads = [t, l, b, r], parsed as Conv's); arg mode "constant" (default;
// arg value, default 0), "reflect" (mirror without repeating the edge, as numpy's "reflect"; pads
// must be smaller than the dim) or "edge" (repeat the border). Stride, dilation must be 1 and
// legacy_pad unset, as Caffe2 demanded; kernel args are ignored.
// PadImageGradient(dY) -> dX (same args): dY summed back onto the input pixels each output read.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

enum class PadMode : int { kConstant = 0, kReflect = 1, kEdge = 2 };

struct PadGeom {
  int64_t nc = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t pt = 0, pl = 0;
  PadMode mode = PadMode::kConstant;
  float value = 0.f;
};

// The input coordinate output coordinate `o` reads along a dim of size n with head pad `pad`; -1 for
// the constant.
HN_HOST_DEVICE inline int64_t PadSource(int64_t o, int64_t pad, int64_t n, PadMode mode) {
  int64_t i = o - pad;
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kEdge) return i < 0 ? 0 : n - 1;
  if (i < 0) i = -i;
  if (i >= n) i = 2 * n - 2 - i;
  return i;
}
// Input offset output element t reads, or -1.
HN_HOST_DEVICE inline int64_t PadSourceOffset(int64_t t, const PadGeom& g) {
  const int64_t x = t % g.ow, y = (t / g.ow) % g.oh, c = t / (g.ow * g.oh);
  const int64_t sy = PadSource(y, g.pt, g.h, g.mode), sx = PadSource(x, g.pl, g.w, g.mode);
  return sy < 0 || sx < 0 ? -1 : (c * g.h + sy) * g.w + sx;
}

template <class Context>
void PadImageForward(const PadGeom& g, const float* x, float* y, Context* ctx);
template <class Context>
void PadImageBackward(const PadGeom& g, const float* dy, float* dx, Context* ctx);

// From the def and the input's shape (forward: X; gradient: dY, then the input is the smaller one).
PadGeom MakePadGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& shape, bool from_output);

template <class Context>
class PadImageOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    const PadGeom g = MakePadGeom(this->def(), X.shape(), false);
    Tensor* Y = this->Output(0, {X.dim(0), X.dim(1), g.oh, g.ow}, DataType::Float);
    PadImageForward<Context>(g, X.template data<float>(), Y->template mutable_data<float>(), &this->context_);
  }
};

template <class Context>
class PadImageGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& dY = this->Input(0);
    EnforceFloatInput(this->def(), dY, 0);
    const PadGeom g = MakePadGeom(this->def(), dY.shape(), true);
    Tensor* dX = this->Output(0, {dY.dim(0), dY.dim(1), g.h, g.w}, DataType::Float);
    PadImageBackward<Context>(g, dY.template data<float>(), dX->template mutable_data<float>(), &this->context_);
  }
};

}  // namespace hetnet
