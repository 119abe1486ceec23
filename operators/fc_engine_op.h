// What the CPU engines that run FC (W is [N, K]) and FCTransposed (W is [K, N]) with one kernel
// (DNNL, PACKED) share: the arguments, the float32 check, the (M, K, N) and output shape with the
// ops' own checks and messages, and the operator each hands other cases to.
#pragma once

#include <memory>

#include "core/inference_fusion.h"
#include "operators/fc_op.h"
#include "operators/fc_transposed_op.h"

namespace hetnet {

template <bool kTransposed>
class CpuFCEngineOp : public Operator<CPUContext> {
 public:
  CpuFCEngineOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        axis_w_(GetSingleArgument<int>("axis_w", 1)),
        relu_(FusedReluArgument(def)),
        ws_(ws) {}

 protected:
  bool FloatInputs() const {
    for (int i = 0; i < 3; ++i)
      if (Input(i).dtype() != DataType::Float) return false;
    return true;
  }
  FCDims Dims() const {
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& b = Input(2);
    if constexpr (kTransposed) {
      FCTDims t = ComputeFCTransposedDims(def(), X.shape(), W.shape(), &b.shape());
      return FCDims{t.M, t.K, t.N, std::move(t.y_shape)};
    } else {
      return ComputeFCDims(def(), X.shape(), W.shape(), &b.shape(), axis_, axis_w_);
    }
  }
  // Runs `make()`'s operator (made once) for what this engine does not run; it reads
  // fused_activation itself.
  template <class Make>
  void RunFallback(Make make) {
    if (!fallback_) fallback_ = make();
    fallback_->Run();
  }

  int axis_, axis_w_;
  bool relu_;  // fused_activation "Relu"
  Workspace* ws_;

 private:
  std::unique_ptr<OperatorBase> fallback_;
};

}  // namespace hetnet
