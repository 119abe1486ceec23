// FC: Y = X * W^T + b with X flattened to [M, K] at `axis` and W to [N, K] at `axis_w`; Y has X's dims
// before `axis` followed by N. fused_activation "Relu" (the inference rewrite, core/inference_fusion.h)
// applies max(Y, 0) after the bias (float32 only). FCGradient(X, W, dY) -> dW, db[, dX]. Shape logic here; the math is
// device/math.h's Gemm, broadcast add and reduction.
#pragma once

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/relu_op.h"
#include "device/math.h"

namespace hetnet {

struct FCDims {
  int64_t M, K, N;
  std::vector<int64_t> y_shape;
};

// Checks X, W (and b when given) against each other; messages name the op's blobs.
inline FCDims ComputeFCDims(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                            const std::vector<int64_t>& w, const std::vector<int64_t>* b, int axis, int axis_w) {
  auto canon = [&](int a, const std::vector<int64_t>& s, int input, const char* what) {
    const int n = static_cast<int>(s.size());
    HN_ENFORCE(a >= -n && a <= n, "FC: ", what, " ", a, " is out of range for input ", input, " ('",
               def.input(input), "') of shape ", ShapeToString(s));
    return a < 0 ? a + n : a;
  };
  const int ax = canon(axis, x, 0, "axis");
  const int axw = canon(axis_w, w, 1, "axis_w");
  auto prod = [](const std::vector<int64_t>& s, size_t b, size_t e) {
    int64_t p = 1;
    for (size_t i = b; i < e; ++i) p *= s[i];
    return p;
  };
  FCDims d;
  d.M = prod(x, 0, ax);
  d.K = prod(x, ax, x.size());
  d.N = prod(w, 0, axw);
  const int64_t wk = prod(w, axw, w.size());
  HN_ENFORCE(wk == d.K, "FC: input 1 ('", def.input(1), "') has shape ", ShapeToString(w), " (", d.N, " x ", wk,
             " at axis_w ", axw, ") but input 0 ('", def.input(0), "') of shape ", ShapeToString(x), " has ", d.K,
             " columns at axis ", ax);
  if (b) {
    HN_ENFORCE(b->size() == 1 && (*b)[0] == d.N, "FC: input 2 ('", def.input(2), "') has shape ",
               ShapeToString(*b), " but the bias must be 1-D of size N = ", d.N, " (rows of '", def.input(1), "')");
  }
  d.y_shape.assign(x.begin(), x.begin() + ax);
  d.y_shape.push_back(d.N);
  return d;
}

// FC on float16 X, W, b (Y float16): operators/fc_op_fp16.cc (CPU, float32 math) and fc_op_fp16.cu (CUDA,
// cublasGemmEx on tensor cores with float32 accumulation). Pointers on the context's device. relu:
// fused_activation "Relu", applied before the result is rounded (CPU) or on the float16 result (CUDA:
// the same values, max(round(v), 0) == round(max(v, 0))).
template <class Context>
void FCHalfKernel(int64_t M, int64_t N, int64_t K, const Half* x, const Half* w, const Half* b, bool relu, Half* y,
                  Context* ctx);

template <class Context>
class FCOp final : public Operator<Context> {
 public:
  FCOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        axis_(this->template GetSingleArgument<int>("axis", 1)),
        axis_w_(this->template GetSingleArgument<int>("axis_w", 1)), relu_(FusedReluArgument(def)) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& W = this->Input(1);
    const Tensor& b = this->Input(2);
    if (X.dtype() == DataType::Float16) {
      for (int i = 1; i < 3; ++i)
        HN_ENFORCE(this->Input(i).dtype() == DataType::Float16, "FC: input 0 ('", this->def().input(0),
                   "') is float16 but input ", i, " ('", this->def().input(i), "') is ",
                   DataTypeName(this->Input(i).dtype()), "; float16 FC needs X, W and b all float16");
      const FCDims d = ComputeFCDims(this->def(), X.shape(), W.shape(), &b.shape(), axis_, axis_w_);
      Tensor* Y = this->Output(0, d.y_shape, DataType::Float16);
      FCHalfKernel<Context>(d.M, d.N, d.K, X.template data<Half>(), W.template data<Half>(), b.template data<Half>(), relu_,
                            Y->template mutable_data<Half>(), &this->context_);
      return;
    }
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const FCDims d = ComputeFCDims(this->def(), X.shape(), W.shape(), &b.shape(), axis_, axis_w_);
    Tensor* Y = this->Output(0, d.y_shape, DataType::Float);
    float* y = Y->template mutable_data<float>();
    math::Gemm<Context>(false, true, d.M, d.N, d.K, 1.f, X.template data<float>(), W.template data<float>(), 0.f,
                        y, &this->context_);
    math::BroadcastBinary<float, Context>(math::BinaryOp::Add, d.M, d.N, 1, y, b.template data<float>(), y,
                                          &this->context_);
    if (relu_) ReluKernel<Context>(d.M * d.N, y, y, &this->context_);
  }

 private:
  int axis_, axis_w_;
  bool relu_;
};

// Inputs X, W, dY; outputs dW, db and (optionally) dX.
template <class Context>
class FCGradientOp final : public Operator<Context> {
 public:
  FCGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        axis_(this->template GetSingleArgument<int>("axis", 1)),
        axis_w_(this->template GetSingleArgument<int>("axis_w", 1)) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& W = this->Input(1);
    const Tensor& dY = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const FCDims d = ComputeFCDims(this->def(), X.shape(), W.shape(), nullptr, axis_, axis_w_);
    HN_ENFORCE(dY.numel() == d.M * d.N, "FCGradient: input 2 ('", this->def().input(2), "') has shape ",
               dY.ShapeString(), " but the output of FC has shape ", ShapeToString(d.y_shape));
    const float* x = X.template data<float>();
    const float* w = W.template data<float>();
    const float* dy = dY.template data<float>();
    Tensor* dW = this->Output(0, W.shape(), DataType::Float);
    math::Gemm<Context>(true, false, d.N, d.K, d.M, 1.f, dy, x, 0.f, dW->template mutable_data<float>(),
                        &this->context_);
    Tensor* db = this->Output(1, {d.N}, DataType::Float);
    math::ReduceSumPreMidPost<Context>(d.M, d.N, 1, dy, db->template mutable_data<float>(), &this->context_);
    if (this->OutputSize() > 2) {
      Tensor* dX = this->Output(2, X.shape(), DataType::Float);
      math::Gemm<Context>(false, false, d.M, d.K, d.N, 1.f, dy, w, 0.f, dX->template mutable_data<float>(),
                          &this->context_);
    }
  }

 private:
  int axis_, axis_w_;
};

}  // namespace hetnet
