// LRN / LRNGradient, CUDNN engine (float32): cudnnLRNCrossChannel{Forward,Backward}, whose window
// [c - floor((n-1)/2), c + ceil((n-1)/2)] and y = x / (k + alpha/n * sum x^2)^beta equal Caffe2's.
// cuDNN does not return the scale, so an LRN with the `scale` output, or with arguments outside
// cuDNN's ranges (1 <= size <= 16, bias >= 1e-5, beta >= 0.01), runs the default CUDA kernels.
#include <memory>

#include "device/cuda/cudnn_context.h"
#include "operators/lrn_op.h"

namespace hetnet {

namespace {
bool CudnnLRNFits(int size, float beta, float bias) {
  return size >= CUDNN_LRN_MIN_N && size <= CUDNN_LRN_MAX_N && bias >= CUDNN_LRN_MIN_K && beta >= CUDNN_LRN_MIN_BETA;
}

template <bool kGrad>
class CudnnLRNOp final : public Operator<CUDAContext> {
  using Fallback = std::conditional_t<kGrad, LRNGradientOp<CUDAContext>, LRNOp<CUDAContext>>;

 public:
  CudnnLRNOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), size_(GetSingleArgument<int>("size", 0)),
        alpha_(GetSingleArgument<float>("alpha", 0.f)), beta_(GetSingleArgument<float>("beta", 0.f)),
        bias_(GetSingleArgument<float>("bias", 1.f)), ws_(ws) {
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_));
    HN_CUDNN_CHECK(cudnnCreateLRNDescriptor(&lrn_));
  }
  ~CudnnLRNOp() override {
    cudnnDestroyTensorDescriptor(desc_);
    cudnnDestroyLRNDescriptor(lrn_);
  }
  void RunOnDevice() override {
    const Tensor& X = Input(0);
    if ((!kGrad && OutputSize() > 1) || !CudnnLRNFits(size_, beta_, bias_)) {
      if (!fallback_) fallback_.reset(new Fallback(def(), ws_));
      fallback_->Run();
      return;
    }
    const LRNParams p = MakeLRNParams(def(), X, size_, alpha_, beta_, bias_);
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)p.N, (int)p.C, (int)p.HW, 1));
    HN_CUDNN_CHECK(cudnnSetLRNDescriptor(lrn_, static_cast<unsigned>(size_), alpha_, beta_, bias_));
    const float one = 1.f, zero = 0.f;
    cudnnHandle_t h = CudnnHandle(context_);
    if (!kGrad) {
      HN_CUDNN_CHECK(cudnnLRNCrossChannelForward(h, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, desc_, X.data<float>(), &zero,
                                                 desc_, Output(0, X.shape(), DataType::Float)->mutable_data<float>()));
      return;
    }
    for (int i = 1; i < 3; ++i)
      HN_ENFORCE(Input(i).shape() == X.shape() && Input(i).dtype() == DataType::Float, "LRNGradient: input ", i, " ('",
                 def().input(i), "') is ", Input(i).DebugString(), " but float32 ", X.ShapeString(), " is required");
    HN_CUDNN_CHECK(cudnnLRNCrossChannelBackward(h, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, desc_, Input(1).data<float>(),
                                                desc_, Input(2).data<float>(), desc_, X.data<float>(), &zero, desc_,
                                                Output(0, X.shape(), DataType::Float)->mutable_data<float>()));
  }

 private:
  int size_;
  float alpha_, beta_, bias_;
  Workspace* ws_;
  cudnnTensorDescriptor_t desc_ = nullptr;
  cudnnLRNDescriptor_t lrn_ = nullptr;
  std::unique_ptr<OperatorBase> fallback_;
};
}  // namespace

REGISTER_CUDA_OPERATOR_WITH_ENGINE(LRN, CUDNN, CudnnLRNOp<false>);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(LRNGradient, CUDNN, CudnnLRNOp<true>);

}  // namespace hetnet
