// The CUDNN engine of Conv and ConvTranspose (forward and gradient), float32 and float16. One class
// template per direction over the kind; conv_op_cudnn.cc and conv_transpose_op_cudnn.cc register it.
// Conv's fused_activation "Relu" and fused_residual (the inference rewrite's, core/inference_fusion.h)
// go into cuDNN's fused conv + bias + add + activation call where it takes them. Conv's forward also
// runs channels-last activations (Caffe2's order NHWC, or activation_order NHWC from the layout pass,
// core/channels_last_pass.h, whose NCHW filter it transposes once per change): the layout of cuDNN's
// float16 tensor-core kernels.
// Scratch memory is the shared per-stream workspace (device/cuda/cudnn_workspace.h). Algorithms are
// chosen by measurement (cudnnFind*) unless exhaustive_search=0 asks for cuDNN's heuristics, as
// Caffe2's default was (brew writes it): on an H200 measurement ran batch-16 ResNet layers 1.5-3.6x
// faster than the heuristic pick (benchmarks/RESULTS.md, 2026-11-26). Asymmetric
// padding (legacy SAME / explicit pad_b != pad_t), which cuDNN cannot express, runs the default
// CUDA engine (im2col + cuBLAS, float32) instead.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>

#include "operators/conv_op.h"
#include "operators/conv_op_cudnn_util.h"
#include "operators/conv_transpose_op.h"

namespace hetnet {
namespace cudnn_conv {

inline AlgoCache& FwdCache() { static AlgoCache c; return c; }
inline AlgoCache& BwdDataCache() { static AlgoCache c; return c; }
inline AlgoCache& BwdFilterCache() { static AlgoCache c; return c; }
inline AlgoCache& EngineCache() { static AlgoCache c; return c; }  // algo 1: the default engine is faster

// Seconds of `reps` runs of f after one warm-up run, the whole device synchronized around them.
template <typename F>
double DeviceSeconds(F&& f, int reps = 3) {
  f();
  HN_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  HN_CUDA_CHECK(cudaDeviceSynchronize());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Shared state of the forward and gradient ops.
template <ConvPoolKind K>
class Base : public Operator<CUDAContext> {
 public:
  Base(const caffe2::OperatorDef& def, Workspace* ws, bool allow_channels_last = false)
      : Operator<CUDAContext>(def, ws), args_(ParseConvPoolArgs(def, K, allow_channels_last)),
        limit_(WorkspaceLimit(GetSingleArgument<int64_t>("ws_nbytes_limit", static_cast<int64_t>(kCudnnDefaultWsLimit)))),
        exhaustive_(!HasArgument("exhaustive_search") || GetSingleArgument<int>("exhaustive_search", 1) != 0),
        choose_engine_(GetSingleArgument<int>("choose_engine", 1) != 0), ws_(ws) {}

 protected:
  std::string Key(const std::string& descs_key) const {
    return descs_key + "|" + std::to_string(limit_) + "|" + std::to_string(exhaustive_);
  }
  CudnnWorkspace& Space() { return CudnnWorkspace::Get(context_.device_id(), context_.stream()); }
  // exhaustive_search's scratch (up to the limit) is temporary, from the caching allocator, so the
  // shared workspace grows only to what the chosen algorithms use. cudnnFind* blocks until done.
  template <typename F>
  void WithSearchScratch(F&& f) {
    std::shared_ptr<void> scratch = context_.allocator()->Allocate(limit_);
    f(scratch.get(), limit_);
    context_.FinishDeviceComputation();
  }
  // Forward convolution algorithm for descs (in -> out).
  Algo ForwardAlgo(const std::string& key, const void* x, const void* w, void* y) {
    return FwdCache().Get(Key(key) + "|fwd", [&] {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int n = 0;
      if (exhaustive_) {
        WithSearchScratch([&](void* p, size_t b) {
          HN_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(CudnnHandle(context_), d_.in, x, d_.w, w, d_.conv, d_.out,
                                                                y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf, p, b));
        });
      } else {
        HN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(CudnnHandle(context_), d_.in, d_.w, d_.conv, d_.out,
                                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
      }
      return PickFitting(perf, n, limit_, "forward");
    });
  }
  Algo BackwardDataAlgo(const std::string& key, const void* w, const void* dy, void* dx) {
    return BwdDataCache().Get(Key(key) + "|bwd_data", [&] {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      int n = 0;
      if (exhaustive_) {
        WithSearchScratch([&](void* p, size_t b) {
          HN_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(CudnnHandle(context_), d_.w, w, d_.out, dy, d_.conv,
                                                                     d_.in, dx, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                                     &n, perf, p, b));
        });
      } else {
        HN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(CudnnHandle(context_), d_.w, d_.out, d_.conv, d_.in,
                                                                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
      }
      return PickFitting(perf, n, limit_, "backward-data");
    });
  }
  Algo BackwardFilterAlgo(const std::string& key, const void* x, const void* dy, void* dw) {
    return BwdFilterCache().Get(Key(key) + "|bwd_filter", [&] {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      int n = 0;
      if (exhaustive_) {
        WithSearchScratch([&](void* p, size_t b) {
          HN_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
              CudnnHandle(context_), d_.in, x, d_.out, dy, d_.conv, d_.w, dw, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n,
              perf, p, b));
        });
      } else {
        HN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(CudnnHandle(context_), d_.in, d_.out, d_.conv, d_.w,
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
      }
      return PickFitting(perf, n, limit_, "backward-filter");
    });
  }
  // Runs the default CUDA engine's op (float32) for what cuDNN cannot express.
  template <typename Fallback>
  void RunFallback(DataType dt, const ConvPoolGeom& g) {
    HN_CHECK_KIND(kUnsupported, !g.channels_last, def().type(), " (CUDNN): channels-last (NHWC) activations need ",
                  "symmetric pads and a residual of the output's shape and dtype (pads t ", g.pt, " b ", g.pb, ", l ",
                  g.pl, " r ", g.pr, ")");
    HN_CHECK_KIND(kUnsupported, dt == DataType::Float, def().type(), " (CUDNN): asymmetric pads (t ", g.pt, " b ", g.pb,
                  ", l ", g.pl, " r ", g.pr, ") are not supported for ", DataTypeName(dt));
    if (!fallback_) fallback_.reset(new Fallback(def(), ws_));
    fallback_->Run();
  }

  ConvPoolArgs args_;
  size_t limit_;
  bool exhaustive_;
  bool choose_engine_;
  Workspace* ws_;
  Descs d_;
  std::unique_ptr<OperatorBase> fallback_;
};

inline void CheckSameType(const caffe2::OperatorDef& def, const Tensor& a, const Tensor& b, int i) {
  HN_ENFORCE(a.dtype() == b.dtype(), def.type(), ": input ", i, " ('", def.input(i), "') is ", DataTypeName(b.dtype()),
             " but input 0 is ", DataTypeName(a.dtype()));
}

template <ConvPoolKind K>
class CudnnConvOp final : public Base<K> {
  using Fallback = std::conditional_t<K == ConvPoolKind::Conv, ConvOp<CUDAContext>, ConvTransposeOp<CUDAContext>>;

 public:
  CudnnConvOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Base<K>(def, ws, /*allow_channels_last=*/K == ConvPoolKind::Conv),
        relu_(K == ConvPoolKind::Conv && FusedReluArgument(def)), residual_(def) {}
  ~CudnnConvOp() override {
    if (act_) cudnnDestroyActivationDescriptor(act_);
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& F = this->Input(1);
    const bool has_bias = this->InputSize() >= 3;
    const int typed_inputs = residual_.present() ? 3 : this->InputSize();
    for (int i = 1; i < typed_inputs; ++i) CheckSameType(this->def(), X, this->Input(i), i);
    const cudnnDataType_t dt = DataTypeOf(this->def(), X.dtype());
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), K, this->args_, X.shape(), &F.shape(),
                                               has_bias ? &this->Input(2).shape() : nullptr);
    // A residual of another shape or dtype (broadcast by the Add it replaced) runs on the default
    // kernels, which add it as that Add would.
    const Tensor* R = residual_.present() ? &this->Input(3) : nullptr;
    if (!SymmetricPads(g) || (R && (R->shape() != g.y_shape() || R->dtype() != X.dtype())))
      return this->template RunFallback<Fallback>(X.dtype(), g);
    Tensor* Y = this->Output(0, g.y_shape(), X.dtype());
    const std::string key = this->d_.Set(g, K, dt);
    const void* x = X.raw_data();
    const void* w = g.channels_last && !g.filter_hwc ? krsc_.Of(this->def(), F, &this->context_) : F.raw_data();
    void* y = Y->raw_mutable_data(X.dtype());
    const float one = 1.f, zero = 0.f;
    cudnnHandle_t h = CudnnHandle(this->context_);
    auto& d = this->d_;
    if (K == ConvPoolKind::Conv) {
      const Algo a = this->ForwardAlgo(key, x, w, y);
      auto forward = [&] {
        this->Space().Run(this, a.bytes, [&](void* p, size_t n) {
          // Bias, residual and Relu in cuDNN's fused call where it takes them (ResNet's Conv + BN
          // (folded) + Add + Relu in one call), else one call each, as the unfused ops would.
          if (relu_ && has_bias && FusedForward(h, a, p, n, x, w, R, y)) return;
          HN_CUDNN_CHECK(cudnnConvolutionForward(h, &one, d.in, x, d.w, w, d.conv, (cudnnConvolutionFwdAlgo_t)a.algo, p,
                                                 n, &zero, d.out, y));
          if (has_bias) HN_CUDNN_CHECK(cudnnAddTensor(h, &one, d.bias, this->Input(2).raw_data(), &one, d.out, y));
          if (R) HN_CUDNN_CHECK(cudnnAddTensor(h, &one, d.out, R->raw_data(), &one, d.out, y));
          if (relu_) HN_CUDNN_CHECK(cudnnActivationForward(h, Relu(), &one, d.out, y, &zero, d.out, y));
        });
      };
      if (X.dtype() == DataType::Float && this->choose_engine_ && !g.channels_last && DefaultEngineIsFaster(key, forward))
        return this->template RunFallback<Fallback>(X.dtype(), g);
      return forward();
    } else {  // Y = the data gradient of the convolution Y -> X, applied to X
      const Algo a = this->BackwardDataAlgo(key, w, x, y);
      this->Space().Run(this, a.bytes, [&](void* p, size_t n) {
        HN_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, d.w, w, d.out, x, d.conv, (cudnnConvolutionBwdDataAlgo_t)a.algo,
                                                    p, n, &zero, d.in, y));
      });
    }
    if (has_bias) HN_CUDNN_CHECK(cudnnAddTensor(h, &one, d.bias, this->Input(2).raw_data(), &one, d.in, y));
  }

 private:
  // cuDNN's pick is not always the fastest: on an H200 its heuristics ran batch-1 1x1 convolutions
  // at 9-12% of the GEMM rate, 4-7x slower than the default engine (cuBLAS), while at batch 16 cuDNN
  // won (benchmarks/RESULTS.md, 2026-11-26). The first run of each float32 shape times both and
  // keeps the faster; choose_engine=0 keeps cuDNN.
  template <typename F>
  bool DefaultEngineIsFaster(const std::string& key, F&& cudnn) {
    return EngineCache().Get(this->Key(key) + "|engine", [&] {
      if (!this->fallback_) this->fallback_.reset(new Fallback(this->def(), this->ws_));
      // The best of three interleaved rounds each: one round of 3 runs misjudged 1x1 layers on the
      // H200 (kept cuDNN at 4.9 TFLOP/s where the default engine measured 6.0).
      double t_cudnn = 1e300, t_default = 1e300;
      for (int round = 0; round < 3; ++round) {
        t_cudnn = std::min(t_cudnn, DeviceSeconds(cudnn));
        t_default = std::min(t_default, DeviceSeconds([&] { this->fallback_->Run(); }));
      }
      return Algo{t_default < t_cudnn ? 1 : 0, 0};
    }).algo == 1;
  }

  cudnnActivationDescriptor_t Relu() {
    if (!act_) {
      HN_CUDNN_CHECK(cudnnCreateActivationDescriptor(&act_));
      HN_CUDNN_CHECK(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    return act_;
  }
  // y = relu(conv(x) + bias [+ R]) in one cuDNN call; false where cuDNN refuses this algorithm or
  // shape fused (any status but success: cuDNN 9 refuses with several NOT_SUPPORTED sub-codes): the
  // caller then runs the calls one by one, which write all of y. Without R, z is y with alpha2 = 0.
  bool FusedForward(cudnnHandle_t h, const Algo& a, void* p, size_t n, const void* x, const void* w, const Tensor* R,
                    void* y) {
    if (fused_unsupported_) return false;
    auto& d = this->d_;
    const float one = 1.f, zero = 0.f;
    const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
        h, &one, d.in, x, d.w, w, d.conv, (cudnnConvolutionFwdAlgo_t)a.algo, p, n, R ? &one : &zero, d.out,
        R ? R->raw_data() : y, d.bias, this->Input(2).raw_data(), Relu(), d.out, y);
    if (st == CUDNN_STATUS_SUCCESS) return true;
    fused_unsupported_ = true;  // (a real fault shows again in the separate calls, which throw)
    return false;
  }

  bool relu_;
  ConvResidual residual_;
  KrscFilter krsc_;  // activation_order NHWC: the filter as cuDNN's NHWC kernels read it
  cudnnActivationDescriptor_t act_ = nullptr;
  bool fused_unsupported_ = false;  // this op's shapes and algorithm: one call each
};

template <ConvPoolKind K>
class CudnnConvGradientOp final : public Base<K> {
  using Fallback =
      std::conditional_t<K == ConvPoolKind::Conv, ConvGradientOp<CUDAContext>, ConvTransposeGradientOp<CUDAContext>>;

 public:
  CudnnConvGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Base<K>(def, ws), no_bias_(this->template GetSingleArgument<int>("no_bias", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& F = this->Input(1);
    const Tensor& dY = this->Input(2);
    for (int i = 1; i < 3; ++i) CheckSameType(this->def(), X, this->Input(i), i);
    const cudnnDataType_t dt = DataTypeOf(this->def(), X.dtype());
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), K, this->args_, X.shape(), &F.shape());
    HN_ENFORCE(dY.shape() == g.y_shape(), this->def().type(), ": input 2 ('", this->def().input(2), "') has shape ",
               dY.ShapeString(), " but the forward output has shape ", ShapeToString(g.y_shape()));
    if (!SymmetricPads(g)) return this->template RunFallback<Fallback>(X.dtype(), g);
    const int expected = no_bias_ ? 2 : 3;
    HN_ENFORCE(this->OutputSize() == expected - 1 || this->OutputSize() == expected, this->def().type(), ": ",
               this->OutputSize(), " outputs but no_bias=", no_bias_);
    const std::string key = this->d_.Set(g, K, dt);
    const bool conv = K == ConvPoolKind::Conv;
    // The cuDNN convolution runs in -> out: Conv in = X, out = dY; ConvTranspose in = dY, out = X.
    const void* in = conv ? X.raw_data() : dY.raw_data();
    const void* out = conv ? dY.raw_data() : X.raw_data();
    const void* w = F.raw_data();
    void* dw = this->Output(0, F.shape(), X.dtype())->raw_mutable_data(X.dtype());
    void* dx = this->OutputSize() == expected ? this->Output(expected - 1, X.shape(), X.dtype())->raw_mutable_data(X.dtype())
                                              : nullptr;
    const float one = 1.f, zero = 0.f;
    cudnnHandle_t h = CudnnHandle(this->context_);
    auto& d = this->d_;
    if (!no_bias_)
      HN_CUDNN_CHECK(cudnnConvolutionBackwardBias(h, &one, conv ? d.out : d.in, dY.raw_data(), &zero, d.bias,
                                                  this->Output(1, {g.M}, X.dtype())->raw_mutable_data(X.dtype())));
    const Algo af = this->BackwardFilterAlgo(key, in, out, dw);
    this->Space().Run(this, af.bytes, [&](void* p, size_t n) {
      HN_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, &one, d.in, in, d.out, out, d.conv,
                                                    (cudnnConvolutionBwdFilterAlgo_t)af.algo, p, n, &zero, d.w, dw));
    });
    if (!dx) return;
    if (conv) {
      const Algo ad = this->BackwardDataAlgo(key, w, out, dx);
      this->Space().Run(this, ad.bytes, [&](void* p, size_t n) {
        HN_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, d.w, w, d.out, out, d.conv,
                                                    (cudnnConvolutionBwdDataAlgo_t)ad.algo, p, n, &zero, d.in, dx));
      });
    } else {  // dX = the forward convolution of dY
      const Algo ad = this->ForwardAlgo(key, in, w, dx);
      this->Space().Run(this, ad.bytes, [&](void* p, size_t n) {
        HN_CUDNN_CHECK(cudnnConvolutionForward(h, &one, d.in, in, d.w, w, d.conv, (cudnnConvolutionFwdAlgo_t)ad.algo, p, n,
                                               &zero, d.out, dx));
      });
    }
  }

 private:
  bool no_bias_;
};

}  // namespace cudnn_conv
}  // namespace hetnet
