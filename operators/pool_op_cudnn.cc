// MaxPool / AveragePool (+ gradients), CUDNN engine (float32 and float16). cuDNN's windows and
// divisors equal Caffe2's when the padding is symmetric (AveragePool: EXCLUDE_PADDING divides by
// the window clipped to the input, INCLUDE_PADDING by kernel_h * kernel_w, as count_include_pad);
// asymmetric padding (CAFFE_LEGACY_POOLING's ceil mode, explicit pad_b != pad_t) runs the default
// CUDA kernels (pool_op.cu). MaxPool's cuDNN gradient gives a tie to one input, Caffe2's to all.
// order NHWC (Caffe2's, or the layout pass's between channels-last convolutions) runs here too; the
// pools follow float16 runs (core/reduced_precision.h) that the CUDNN Conv starts.
#include <memory>

#include "core/reduced_precision.h"
#include "device/cuda/cudnn_context.h"
#include "operators/pool_op.h"

namespace hetnet {

namespace {
struct PoolDescs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
  PoolDescs() {
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    HN_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pool));
  }
  ~PoolDescs() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyPoolingDescriptor(pool);
  }
  void Set(const ConvPoolGeom& g, bool is_max, bool count_include_pad, cudnnDataType_t dt) {
    const cudnnTensorFormat_t fmt = g.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, fmt, dt, (int)g.N, (int)g.C, (int)g.H, (int)g.W));
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, fmt, dt, (int)g.N, (int)g.C, (int)g.OH, (int)g.OW));
    const cudnnPoolingMode_t mode = is_max ? CUDNN_POOLING_MAX
                                    : count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    HN_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool, mode, CUDNN_NOT_PROPAGATE_NAN, g.kh, g.kw, g.pt, g.pl, g.sh, g.sw));
  }
};

cudnnDataType_t PoolDataType(const caffe2::OperatorDef& def, DataType t) {
  if (t == DataType::Float) return CUDNN_DATA_FLOAT;
  if (t == DataType::Float16) return CUDNN_DATA_HALF;
  HN_THROW(kInvalidArgument, def.type(), " (CUDNN): input 0 ('", def.input(0), "') is ", DataTypeName(t),
           " but float32 or float16 is required");
}
}  // namespace

// Shared by the forward and gradient cuDNN pool ops: arguments, descriptors, and the default-engine
// CUDA op that runs the shapes cuDNN cannot express (asymmetric pads, float32 NCHW only).
template <class Fallback>
class CudnnPoolBase : public Operator<CUDAContext> {
 public:
  CudnnPoolBase(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), args_(ParsePoolArgs(def, /*allow_channels_last=*/true)),
        count_include_pad_(GetSingleArgument<int>("count_include_pad", 0) != 0), ws_(ws) {}

 protected:
  // The geometry for X; runs the fallback and returns false where cuDNN cannot pool.
  bool Prepare(const Tensor& X, ConvPoolGeom* g) {
    *g = ComputeConvPoolGeom(def(), ConvPoolKind::Pool, args_, X.shape());
    HN_CHECK_KIND(kUnsupported, SymmetricPads(*g) || !g->channels_last, def().type(),
                  " (CUDNN): order NHWC needs symmetric pads (t ", g->pt, " b ", g->pb, ", l ", g->pl, " r ", g->pr, ")");
    if (!SymmetricPads(*g) && X.dtype() == DataType::Float) {
      if (!fallback_) fallback_.reset(new Fallback(def(), ws_));
      fallback_->Run();
      return false;
    }
    HN_CHECK_KIND(kUnsupported, SymmetricPads(*g), def().type(), " (CUDNN): asymmetric pads need float32");
    return true;
  }

  ConvPoolArgs args_;
  bool count_include_pad_;
  Workspace* ws_;
  PoolDescs descs_;
  std::unique_ptr<OperatorBase> fallback_;
};

template <bool kMax>
class CudnnPoolOp final : public CudnnPoolBase<PoolOp<CUDAContext, kMax>> {
 public:
  using CudnnPoolBase<PoolOp<CUDAContext, kMax>>::CudnnPoolBase;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    ConvPoolGeom g;
    if (!this->Prepare(X, &g)) return;
    this->descs_.Set(g, kMax, this->count_include_pad_, PoolDataType(this->def(), X.dtype()));
    Tensor* Y = this->Output(0, g.y_shape(), X.dtype());
    const float one = 1.f, zero = 0.f;
    HN_CUDNN_CHECK(cudnnPoolingForward(CudnnHandle(this->context_), this->descs_.pool, &one, this->descs_.x, X.raw_data(), &zero,
                                       this->descs_.y, Y->raw_mutable_data(X.dtype())));
  }
};

template <bool kMax>
class CudnnPoolGradientOp final : public CudnnPoolBase<PoolGradientOp<CUDAContext, kMax>> {
 public:
  using CudnnPoolBase<PoolGradientOp<CUDAContext, kMax>>::CudnnPoolBase;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    ConvPoolGeom g;
    if (!this->Prepare(X, &g)) return;
    for (int i = 1; i < 3; ++i) {
      const Tensor& in = this->Input(i);
      HN_ENFORCE(in.shape() == g.y_shape() && in.dtype() == X.dtype(), this->def().type(), ": input ", i, " ('",
                 this->def().input(i), "') is ", in.DebugString(), " but ", DataTypeName(X.dtype()),
                 ShapeToString(g.y_shape()), " is required");
    }
    this->descs_.Set(g, kMax, this->count_include_pad_, PoolDataType(this->def(), X.dtype()));
    Tensor* dX = this->Output(0, X.shape(), X.dtype());
    const float one = 1.f, zero = 0.f;
    const PoolDescs& d = this->descs_;
    HN_CUDNN_CHECK(cudnnPoolingBackward(CudnnHandle(this->context_), d.pool, &one, d.y, this->Input(1).raw_data(), d.y,
                                        this->Input(2).raw_data(), d.x, X.raw_data(), &zero, d.x,
                                        dX->raw_mutable_data(X.dtype())));
  }
};

// Reduced-precision inference (core/reduced_precision.h): float16 pools where their input is float16
// already, channels-last (as on the CPU: the layout pass makes NHWC pools of symmetric pads only, so
// the float32-only fallback is never needed). Not yet run on a GPU (written 2026-11-27 without one).
const ReducedPrecisionKernel kHalfPool{{DataType::Float16}, 1, /*follower=*/true,
                                       [](const caffe2::OperatorDef& op, DataType) {
                                         return ArgumentHelper(op).GetSingleArgument<std::string>("order", "NCHW") == "NHWC";
                                       }};
REGISTER_REDUCED_PRECISION_KERNEL(MaxPool, CUDA, "CUDNN", kHalfPool);
REGISTER_REDUCED_PRECISION_KERNEL(AveragePool, CUDA, "CUDNN", kHalfPool);

REGISTER_CUDA_OPERATOR_WITH_ENGINE(MaxPool, CUDNN, CudnnPoolOp<true>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(AveragePool, CUDNN, CudnnPoolOp<false>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(MaxPoolGradient, CUDNN, CudnnPoolGradientOp<true>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(AveragePoolGradient, CUDNN, CudnnPoolGradientOp<false>);

}  // namespace hetnet
