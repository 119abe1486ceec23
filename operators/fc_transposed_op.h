// FCTransposed: Y = X * W + b with X flattened to [M, K] at `axis` (default 1) and W (stored transposed
// relative to FC) flattened to [K, N] at `axis_w` (default 1); Y has X's dims before `axis` then N.
// fused_activation "Relu" (the inference rewrite, core/inference_fusion.h) applies max(Y, 0) after the bias.
// FCTransposedGradient(X, W, dY) -> dW, db[, dX]. The math is device/math.h's Gemm and broadcast add.
#pragma once

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "device/math.h"
#include "operators/cnn_op_utils.h"
#include "operators/relu_op.h"

namespace hetnet {

struct FCTDims {
  int64_t M, K, N;
  std::vector<int64_t> y_shape;
};

inline FCTDims ComputeFCTransposedDims(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                       const std::vector<int64_t>& w, const std::vector<int64_t>* b) {
  ArgumentHelper args(def);
  auto canon = [&](int a, const std::vector<int64_t>& s, int input, const char* what) {
    const int n = static_cast<int>(s.size());
    HN_ENFORCE(a >= -n && a <= n, def.type(), ": ", what, " ", a, " is out of range for input ", input, " ('",
               def.input(input), "') of shape ", ShapeToString(s));
    return a < 0 ? a + n : a;
  };
  const int ax = canon(args.GetSingleArgument<int>("axis", 1), x, 0, "axis");
  const int axw = canon(args.GetSingleArgument<int>("axis_w", 1), w, 1, "axis_w");
  FCTDims d;
  d.M = ProdDims(x, 0, ax);
  d.K = ProdDims(x, ax, x.size());
  const int64_t wk = ProdDims(w, 0, axw);
  d.N = ProdDims(w, axw, w.size());
  HN_ENFORCE(wk == d.K, def.type(), ": input 1 ('", def.input(1), "') has shape ", ShapeToString(w), " (", wk, " x ",
             d.N, " at axis_w ", axw, ") but input 0 ('", def.input(0), "') of shape ", ShapeToString(x), " has ", d.K,
             " columns at axis ", ax, "; FCTransposed's W is K x N");
  if (b) {
    HN_ENFORCE(b->size() == 1 && (*b)[0] == d.N, def.type(), ": input 2 ('", def.input(2), "') has shape ",
               ShapeToString(*b), " but the bias must be 1-D of size N = ", d.N, " (columns of '", def.input(1), "')");
  }
  d.y_shape.assign(x.begin(), x.begin() + ax);
  d.y_shape.push_back(d.N);
  return d;
}

template <class Context>
class FCTransposedOp final : public Operator<Context> {
 public:
  FCTransposedOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), relu_(FusedReluArgument(def)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& W = this->Input(1);
    const Tensor& b = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const FCTDims d = ComputeFCTransposedDims(this->def(), X.shape(), W.shape(), &b.shape());
    float* y = this->Output(0, d.y_shape, DataType::Float)->template mutable_data<float>();
    GemmOrZero<Context>(false, false, d.M, d.N, d.K, X.template data<float>(), W.template data<float>(), y,
                        &this->context_);
    math::BroadcastBinary<float, Context>(math::BinaryOp::Add, d.M, d.N, 1, y, b.template data<float>(), y,
                                          &this->context_);
    if (relu_) ReluKernel<Context>(d.M * d.N, y, y, &this->context_);
  }

 private:
  bool relu_;
};

template <class Context>
class FCTransposedGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& W = this->Input(1);
    const Tensor& dY = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const FCTDims d = ComputeFCTransposedDims(this->def(), X.shape(), W.shape(), nullptr);
    HN_ENFORCE(dY.numel() == d.M * d.N, this->type(), ": input 2 ('", this->def().input(2), "') has shape ",
               dY.ShapeString(), " but the output of FCTransposed has shape ", ShapeToString(d.y_shape));
    const float* dy = dY.template data<float>();
    Tensor* dW = this->Output(0, W.shape(), DataType::Float);
    GemmOrZero<Context>(true, false, d.K, d.N, d.M, X.template data<float>(), dy, dW->template mutable_data<float>(),
                        &this->context_);
    Tensor* db = this->Output(1, {d.N}, DataType::Float);
    math::ReduceSumPreMidPost<Context>(d.M, d.N, 1, dy, db->template mutable_data<float>(), &this->context_);
    if (this->OutputSize() > 2) {
      Tensor* dX = this->Output(2, X.shape(), DataType::Float);
      GemmOrZero<Context>(false, true, d.M, d.K, d.N, dy, W.template data<float>(), dX->template mutable_data<float>(),
                          &this->context_);
    }
  }
};

}  // namespace hetnet
