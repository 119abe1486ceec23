// ConvTranspose (NCHW): the adjoint of Conv. X [N, C, H, W], filter [C, M/group, kH, kW], bias [M]
// -> Y [N, M, (H-1)*stride + kernel + adj - pad_head - pad_tail, ...] (conv_pool_shape.h).
// Per image and group: col = filter_g^T * X_g, Y_g = col2im(col) (+ bias). The gradient
// ConvTransposeGradient(X, filter, dY) -> dfilter, dbias (absent with no_bias=1), dX (optional) uses
// im2col(dY). The same code runs on CPU (Eigen) and CUDA (cuBLAS); the CUDNN engine is
// conv_transpose_op_cudnn.cc when built. Dilations run in the im2col geometry (every device). The N-D form
// (`kernels` with other than 2 values, conv_transpose_nd.h) runs on CPU only: other devices and the gradient refuse it
// (kUnsupported).
#pragma once

#include <type_traits>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "device/math.h"
#include "operators/conv_pool_shape.h"
#include "operators/conv_transpose_nd.h"

namespace hetnet {

// The im2col geometry whose "image" is Y (M/group channels) and whose output grid is X's H x W.
inline math::Im2ColGeom ConvTransposeIm2ColGeom(const ConvPoolGeom& g) {
  return math::Im2ColGeom{g.M / g.group, g.OH, g.OW, g.kh, g.kw, g.dh, g.dw, g.sh, g.sw, g.pt, g.pl, g.H, g.W};
}

template <class Context>
class ConvTransposeOp final : public Operator<Context> {
 public:
  ConvTransposeOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), nd_(IsConvTransposeNd(def)),
        args_(nd_ ? ConvPoolArgs{} : ParseConvPoolArgs(def, ConvPoolKind::ConvTranspose)), col_(this->device()) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& F = this->Input(1);
    const bool has_bias = this->InputSize() == 3;
    for (int i = 0; i < this->InputSize(); ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    if (nd_) return RunNd(X, F, has_bias);
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::ConvTranspose, args_, X.shape(), &F.shape(),
                                               has_bias ? &this->Input(2).shape() : nullptr);
    Tensor* Y = this->Output(0, g.y_shape(), DataType::Float);
    const math::Im2ColGeom ig = ConvTransposeIm2ColGeom(g);
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Mg * g.kh * g.kw, P = g.H * g.W, OP = g.OH * g.OW;
    col_.Resize({K, P});
    float* col = col_.template mutable_data<float>();
    const float* x = X.template data<float>();
    const float* f = F.template data<float>();
    float* y = Y->template mutable_data<float>();
    for (int64_t n = 0; n < g.N; ++n)
      for (int gr = 0; gr < g.group; ++gr) {
        math::Gemm<Context>(true, false, K, P, Cg, 1.f, f + gr * Cg * K, x + (n * g.C + gr * Cg) * P, 0.f, col,
                            &this->context_);
        math::Col2Im<Context>(ig, col, y + (n * g.M + gr * Mg) * OP, &this->context_);
      }
    if (has_bias)
      math::BroadcastBinary<float, Context>(math::BinaryOp::Add, g.N, g.M, OP, y, this->Input(2).template data<float>(),
                                            y, &this->context_);
  }

 private:
  void RunNd(const Tensor& X, const Tensor& F, bool has_bias) {
    if constexpr (std::is_same_v<Context, CPUContext>) {
      const ConvTransposeNdGeom g = ComputeConvTransposeNdGeom(this->def(), X.shape(), F.shape(),
                                                               has_bias ? &this->Input(2).shape() : nullptr);
      Tensor* Y = this->Output(0, g.y_shape(), DataType::Float);
      ConvTransposeNdCpu(g, X.template data<float>(), F.template data<float>(),
                         has_bias ? this->Input(2).template data<float>() : nullptr, Y->template mutable_data<float>());
    } else {
      HN_THROW(kUnsupported, this->def().type(), " (output '", this->def().output(0), "', input '",
               this->def().input(0), "' ", X.ShapeString(), "): ", F.ndim() - 2,
               "-D transposed convolution runs on CPU only; this device's kernel runs 2-D NCHW");
    }
  }

  bool nd_;
  ConvPoolArgs args_;
  Tensor col_;
};

template <class Context>
class ConvTransposeGradientOp final : public Operator<Context> {
 public:
  ConvTransposeGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), args_(ParseConvPoolArgs(def, ConvPoolKind::ConvTranspose)),
        no_bias_(this->template GetSingleArgument<int>("no_bias", 0) != 0), col_(this->device()) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& F = this->Input(1);
    const Tensor& dY = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::ConvTranspose, args_, X.shape(), &F.shape());
    HN_ENFORCE(dY.shape() == g.y_shape(), "ConvTransposeGradient: input 2 ('", this->def().input(2), "') has shape ",
               dY.ShapeString(), " but ConvTranspose's output has shape ", ShapeToString(g.y_shape()));
    const int expected = no_bias_ ? 2 : 3;
    HN_ENFORCE(this->OutputSize() == expected - 1 || this->OutputSize() == expected, "ConvTransposeGradient: ",
               this->OutputSize(), " outputs but no_bias=", no_bias_);
    const math::Im2ColGeom ig = ConvTransposeIm2ColGeom(g);
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Mg * g.kh * g.kw, P = g.H * g.W, OP = g.OH * g.OW;
    const float* x = X.template data<float>();
    const float* f = F.template data<float>();
    const float* dy = dY.template data<float>();
    float* df = this->Output(0, F.shape(), DataType::Float)->template mutable_data<float>();
    math::Set<float, Context>(F.numel(), 0.f, df, &this->context_);
    if (!no_bias_)
      math::ReduceSumPreMidPost<Context>(g.N, g.M, OP, dy,
                                         this->Output(1, {g.M}, DataType::Float)->template mutable_data<float>(),
                                         &this->context_);
    float* dx = this->OutputSize() == expected
                    ? this->Output(expected - 1, X.shape(), DataType::Float)->template mutable_data<float>()
                    : nullptr;
    col_.Resize({K, P});
    float* col = col_.template mutable_data<float>();
    for (int64_t n = 0; n < g.N; ++n)
      for (int gr = 0; gr < g.group; ++gr) {
        const int64_t xoff = (n * g.C + gr * Cg) * P;
        math::Im2Col<Context>(ig, dy + (n * g.M + gr * Mg) * OP, col, &this->context_);
        // dfilter_g [Cg, K] += X_g [Cg, P] * col^T [P, K]
        math::Gemm<Context>(false, true, Cg, K, P, 1.f, x + xoff, col, 1.f, df + gr * Cg * K, &this->context_);
        // dX_g [Cg, P] = filter_g [Cg, K] * col [K, P]
        if (dx) math::Gemm<Context>(false, false, Cg, P, K, 1.f, f + gr * Cg * K, col, 0.f, dx + xoff, &this->context_);
      }
  }

 private:
  ConvPoolArgs args_;
  bool no_bias_;
  Tensor col_;
};

}  // namespace hetnet
