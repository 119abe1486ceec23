// Conv (NCHW): Y = conv(X, filter) + bias with Caffe2's arguments (conv_pool_shape.h). The default
// engine on every device is im2col + GEMM per image and group (math::Im2Col / math::Gemm: Eigen on
// CPU, cuBLAS on CUDA); 1x1 stride-1 unpadded convolutions skip im2col. cuDNN is the CUDNN engine
// (conv_op_cudnn.cc).
// fused_activation "Relu" (set by the inference rewrite, core/inference_fusion.h): Y = max(Y, 0) per
// image after the bias, while it is in cache.
// fused_residual 1 (also the rewrite's: Conv followed by Add): a fourth input R, and
// Y = act(conv(X, filter) + bias + R), R added with Add's numpy broadcasting (ConvResidual).
// ConvGradient(X, filter, dY) -> dfilter, dbias (absent with no_bias=1), dX (optional).
#pragma once

#include <algorithm>
#include <memory>
#include <type_traits>

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "device/math.h"
#include "operators/conv_pool_shape.h"
#include "operators/relu_op.h"

namespace hetnet {

inline math::Im2ColGeom ConvIm2ColGeom(const ConvPoolGeom& g) {
  return math::Im2ColGeom{g.C / g.group, g.H, g.W, g.kh, g.kw, g.dh, g.dw, g.sh, g.sw, g.pt, g.pl, g.OH, g.OW};
}
inline bool ConvIs1x1(const ConvPoolGeom& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.pb == 0 && g.pr == 0;
}
inline void ConvEnforceFloat(const caffe2::OperatorDef& def, const Tensor& t, int i) {
  HN_ENFORCE(t.dtype() == DataType::Float, def.type(), ": input ", i, " ('", def.input(i), "') is ",
             DataTypeName(t.dtype()), " but this kernel takes float32 (float16 Conv runs on the CUDA CUDNN engine)");
}

// The fourth input of a Conv with fused_residual: whether there is one (checked against the
// argument, so a stray fourth input is an error), and the Add that applies it when it does not have
// Y's shape (or on the default kernels): Y = Y + R in place, with Add's broadcasting and messages.
class ConvResidual {
 public:
  explicit ConvResidual(const caffe2::OperatorDef& def)
      : present_(ArgumentHelper(def).GetSingleArgument<int>("fused_residual", 0) != 0) {
    const int n = def.input_size();
    if (present_) {
      HN_ENFORCE(n == 4, def.type(), ": fused_residual takes X, filter, bias and R; got ", n, " inputs");
      HN_ENFORCE(def.output(0) != def.input(3), def.type(), ": the residual input '", def.input(3),
                 "' cannot also be the output");
    }
    else
      HN_ENFORCE(n == 2 || n == 3, def.type(), ": takes X, filter[, bias]; got ", n,
                 " inputs (a fourth, R, needs fused_residual 1)");
  }
  bool present() const { return present_; }
  void AddTo(const caffe2::OperatorDef& def, Workspace* ws) {
    if (!add_) {
      caffe2::OperatorDef add;
      add.set_type("Add");
      add.add_input(def.output(0));
      add.add_input(def.input(3));
      add.add_output(def.output(0));
      if (def.has_device_option()) *add.mutable_device_option() = def.device_option();
      add_ = CreateOperator(add, ws);
    }
    add_->Run();
  }

 private:
  bool present_;
  std::unique_ptr<OperatorBase> add_;
};

template <class Context>
class ConvOp final : public Operator<Context> {
 public:
  ConvOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), args_(ParseConvPoolArgs(def, ConvPoolKind::Conv)),
        relu_(FusedReluArgument(def)), residual_(def), ws_(ws), col_(this->device()) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& F = this->Input(1);
    const bool has_bias = this->InputSize() >= 3;
    const bool relu_per_image = relu_ && !residual_.present();
    for (int i = 0; i < this->InputSize(); ++i) ConvEnforceFloat(this->def(), this->Input(i), i);
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::Conv, args_, X.shape(), &F.shape(),
                                               has_bias ? &this->Input(2).shape() : nullptr);
    Tensor* Y = this->Output(0, g.y_shape(), DataType::Float);
    const math::Im2ColGeom ig = ConvIm2ColGeom(g);
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kh * g.kw, P = g.OH * g.OW;
    const bool one = ConvIs1x1(g);
    // CPU batches run one image per thread (each with its own im2col buffer and a single-threaded
    // GEMM): no serial im2col between parallel GEMMs. One image: Eigen parallelizes the GEMM.
    int workers = 1;
    if constexpr (std::is_same_v<Context, CPUContext>) workers = static_cast<int>(std::min<int64_t>(math::CpuWorkers(), g.N));
    if (!one) col_.Resize({workers, K, P});
    const float* x = X.template data<float>();
    const float* f = F.template data<float>();
    const float* b = has_bias ? this->Input(2).template data<float>() : nullptr;
    float* y = Y->template mutable_data<float>();
    float* col = one ? nullptr : col_.template mutable_data<float>();
    auto image = [&](int64_t n, int worker) {
      float* c = one ? nullptr : col + worker * K * P;
      for (int gr = 0; gr < g.group; ++gr) {
        const float* xi = x + (n * g.C + gr * Cg) * g.H * g.W;
        if (!one) math::Im2Col<Context>(ig, xi, c, &this->context_);
        math::Gemm<Context>(false, false, Mg, P, K, 1.f, f + gr * Mg * K, one ? xi : c, 0.f,
                            y + (n * g.M + gr * Mg) * P, &this->context_);
      }
      // Bias while the image's output is still in cache.
      if (b) math::BroadcastBinary<float, Context>(math::BinaryOp::Add, 1, g.M, P, y + n * g.M * P, b, y + n * g.M * P,
                                                   &this->context_);
      if (relu_per_image) ReluKernel<Context>(g.M * P, y + n * g.M * P, y + n * g.M * P, &this->context_);
    };
    if constexpr (std::is_same_v<Context, CPUContext>) {
      math::ParallelFor(g.N, workers, image);
    } else {
      for (int64_t n = 0; n < g.N; ++n) image(n, 0);
    }
    if (residual_.present()) {
      residual_.AddTo(this->def(), ws_);
      float* yr = Y->template mutable_data<float>();
      if (relu_) ReluKernel<Context>(Y->numel(), yr, yr, &this->context_);
    }
  }

 private:
  ConvPoolArgs args_;
  bool relu_;
  ConvResidual residual_;
  Workspace* ws_;
  Tensor col_;
};

template <class Context>
class ConvGradientOp final : public Operator<Context> {
 public:
  ConvGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), args_(ParseConvPoolArgs(def, ConvPoolKind::Conv)),
        no_bias_(this->template GetSingleArgument<int>("no_bias", 0) != 0), col_(this->device()), dfp_(this->device()) {}

  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& F = this->Input(1);
    const Tensor& dY = this->Input(2);
    for (int i = 0; i < 3; ++i) ConvEnforceFloat(this->def(), this->Input(i), i);
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::Conv, args_, X.shape(), &F.shape());
    HN_ENFORCE(dY.shape() == g.y_shape(), "ConvGradient: input 2 ('", this->def().input(2), "') has shape ",
               dY.ShapeString(), " but Conv's output has shape ", ShapeToString(g.y_shape()));
    const int expected = no_bias_ ? 2 : 3;
    HN_ENFORCE(this->OutputSize() == expected - 1 || this->OutputSize() == expected, "ConvGradient: ",
               this->OutputSize(), " outputs but no_bias=", no_bias_, " gives dfilter", no_bias_ ? "" : ", dbias",
               "[, dX]");
    const math::Im2ColGeom ig = ConvIm2ColGeom(g);
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kh * g.kw, P = g.OH * g.OW;
    const bool one = ConvIs1x1(g);
    const float* x = X.template data<float>();
    const float* f = F.template data<float>();
    const float* dy = dY.template data<float>();
    float* df = this->Output(0, F.shape(), DataType::Float)->template mutable_data<float>();
    math::Set<float, Context>(F.numel(), 0.f, df, &this->context_);
    if (!no_bias_) {
      float* db = this->Output(1, {g.M}, DataType::Float)->template mutable_data<float>();
      math::ReduceSumPreMidPost<Context>(g.N, g.M, P, dy, db, &this->context_);
    }
    const bool want_dx = this->OutputSize() == expected;
    float* dx = want_dx ? this->Output(expected - 1, X.shape(), DataType::Float)->template mutable_data<float>() : nullptr;
    // CPU batches: one image per worker, each worker accumulating its own dfilter (worker 0 into
    // the output, the others into scratch summed at the end).
    int workers = 1;
    if constexpr (std::is_same_v<Context, CPUContext>) workers = static_cast<int>(std::min<int64_t>(math::CpuWorkers(), g.N));
    if (!one) col_.Resize({workers, K, P});
    float* col = one ? nullptr : col_.template mutable_data<float>();
    float* dfp = nullptr;
    if (workers > 1) {
      dfp_.Resize({workers - 1, F.numel()});
      dfp = dfp_.template mutable_data<float>();
      math::Set<float, Context>(dfp_.numel(), 0.f, dfp, &this->context_);
    }
    auto image = [&](int64_t n, int worker) {
      float* c = one ? nullptr : col + worker * K * P;
      float* dfw = worker == 0 ? df : dfp + (worker - 1) * F.numel();
      for (int gr = 0; gr < g.group; ++gr) {
        const int64_t xoff = (n * g.C + gr * Cg) * g.H * g.W;
        const float* dyi = dy + (n * g.M + gr * Mg) * P;
        if (!one) math::Im2Col<Context>(ig, x + xoff, c, &this->context_);
        // dfilter_g += dY_g [Mg, P] * col^T [P, K]
        math::Gemm<Context>(false, true, Mg, K, P, 1.f, dyi, one ? x + xoff : c, 1.f, dfw + gr * Mg * K,
                            &this->context_);
        if (dx) {
          // dcol = filter_g^T [K, Mg] * dY_g [Mg, P]; dX = col2im(dcol)
          math::Gemm<Context>(true, false, K, P, Mg, 1.f, f + gr * Mg * K, dyi, 0.f, one ? dx + xoff : c,
                              &this->context_);
          if (!one) math::Col2Im<Context>(ig, c, dx + xoff, &this->context_);
        }
      }
    };
    if constexpr (std::is_same_v<Context, CPUContext>) {
      math::ParallelFor(g.N, workers, image);
      for (int w = 1; w < workers; ++w) math::Axpy<Context>(F.numel(), 1.f, dfp + (w - 1) * F.numel(), df, &this->context_);
    } else {
      for (int64_t n = 0; n < g.N; ++n) image(n, 0);
    }
  }

 private:
  ConvPoolArgs args_;
  bool no_bias_;
  Tensor col_, dfp_;
};

}  // namespace hetnet
