// SpatialBN / SpatialBNGradient, CUDNN engine (float32): cudnnBatchNormalizationForwardInference /
// ForwardTraining / Backward in CUDNN_BATCHNORM_SPATIAL mode. cuDNN's own running variance is the
// unbiased one while Caffe2's CPU kernel keeps the biased one, so cuDNN is given no running
// statistics and BNRunningUpdate applies Caffe2's rule from the saved mean and inverse std.
// epsilon is raised to CUDNN_BN_MIN_EPSILON when smaller. The forms cuDNN lacks run the default
// CUDA kernels (SpatialBNOp / SpatialBNGradientOp<CUDAContext>) instead: multi-batch (7 or 8
// inputs: statistics from combined sums), order NHWC (declined: unverified on a GPU here), and the
// is_test gradient (which uses the running variance).
#include <algorithm>
#include <memory>

#include "device/cuda/cudnn_context.h"
#include "operators/spatial_bn_op.h"

namespace hetnet {

namespace {
struct BNDescs {
  cudnnTensorDescriptor_t x = nullptr, bn = nullptr;
  BNDescs() {
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bn));
  }
  ~BNDescs() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(bn);
  }
  void Set(const ChannelLayout& d) {
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)d.N, (int)d.C, (int)d.HW, 1));
    HN_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(bn, x, CUDNN_BATCHNORM_SPATIAL));
  }
};

// True when cuDNN cannot run this def: multi-batch inputs or a layout other than NCHW.
bool NeedsDefaultKernel(const caffe2::OperatorDef& def) {
  return def.input_size() > 5 || ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW") != "NCHW";
}

void EnforceFloatInputs(const OperatorBase& op) {
  for (int i = 0; i < op.InputSize(); ++i)
    HN_ENFORCE(op.InputTensor(i).dtype() == DataType::Float, op.type(), " (CUDNN): input ", i, " ('",
               op.def().input(i), "') is ", DataTypeName(op.InputTensor(i).dtype()), " but float32 is required");
}
}  // namespace

class CudnnSpatialBNOp final : public Operator<CUDAContext> {
 public:
  CudnnSpatialBNOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), is_test_(GetSingleArgument<int>("is_test", 0) != 0),
        eps_(std::max<double>(GetSingleArgument<float>("epsilon", 1e-5f), CUDNN_BN_MIN_EPSILON)),
        momentum_(GetSingleArgument<float>("momentum", 0.9f)), ws_(ws) {
    HN_ENFORCE(is_test_ || OutputSize() == 5, "SpatialBN: training (is_test=0) has 5 outputs, got ", OutputSize());
  }
  void RunOnDevice() override {
    if (NeedsDefaultKernel(def())) {
      if (!fallback_) fallback_.reset(new SpatialBNOp<CUDAContext>(def(), ws_));
      fallback_->Run();
      return;
    }
    EnforceFloatInputs(*this);
    const Tensor& X = Input(0);
    const ChannelLayout d = ChannelLayoutOf(def(), X.shape());
    for (int i = 1; i < 5; ++i) CheckPerChannel(def(), Input(i), i, d);
    descs_.Set(d);
    cudnnHandle_t h = CudnnHandle(context_);
    const float one = 1.f, zero = 0.f;
    const float* x = X.data<float>();
    const float* scale = Input(1).data<float>();
    const float* bias = Input(2).data<float>();
    if (is_test_) {
      float* y = Output(0, X.shape(), DataType::Float)->mutable_data<float>();
      HN_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, descs_.x, x,
                                                             descs_.x, y, descs_.bn, scale, bias,
                                                             Input(3).data<float>(), Input(4).data<float>(), eps_));
      return;
    }
    float* rm = Running(1, 3, d.C);
    float* rv = Running(2, 4, d.C);
    float* sm = Output(3, {d.C}, DataType::Float)->mutable_data<float>();
    float* si = Output(4, {d.C}, DataType::Float)->mutable_data<float>();
    float* y = Output(0, X.shape(), DataType::Float)->mutable_data<float>();
    HN_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, descs_.x, x, descs_.x,
                                                          y, descs_.bn, scale, bias, 0.0, nullptr, nullptr, eps_, sm, si));
    BNRunningUpdate<CUDAContext>(d.C, momentum_, static_cast<float>(eps_), sm, si, rm, rv, &context_);
  }

 private:
  float* Running(int out, int in, int64_t C) {
    if (IsInputOutputAlias(in, out)) return Output(out)->mutable_data_existing<float>();
    Tensor* t = Output(out, {C}, DataType::Float);
    t->CopyFrom(Input(in), &context_);
    return t->mutable_data<float>();
  }
  bool is_test_;
  double eps_;
  float momentum_;
  Workspace* ws_;
  BNDescs descs_;
  std::unique_ptr<OperatorBase> fallback_;
};

class CudnnSpatialBNGradientOp final : public Operator<CUDAContext> {
 public:
  CudnnSpatialBNGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), is_test_(GetSingleArgument<int>("is_test", 0) != 0),
        eps_(std::max<double>(GetSingleArgument<float>("epsilon", 1e-5f), CUDNN_BN_MIN_EPSILON)), ws_(ws) {}
  void RunOnDevice() override {
    if (is_test_ || NeedsDefaultKernel(def())) {
      if (!fallback_) fallback_.reset(new SpatialBNGradientOp<CUDAContext>(def(), ws_));
      fallback_->Run();
      return;
    }
    const Tensor& X = Input(0);
    const ChannelLayout d = CheckChannelBackpropInputs(def(), X, Input(2), 0, 2);
    for (int i : {1, 3, 4}) CheckPerChannel(def(), Input(i), i, d);
    descs_.Set(d);
    const float one = 1.f, zero = 0.f;
    HN_CUDNN_CHECK(cudnnBatchNormalizationBackward(
        CudnnHandle(context_), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, descs_.x, X.data<float>(), descs_.x,
        Input(2).data<float>(), descs_.x, Output(0, X.shape(), DataType::Float)->mutable_data<float>(), descs_.bn,
        Input(1).data<float>(), Output(1, {d.C}, DataType::Float)->mutable_data<float>(),
        Output(2, {d.C}, DataType::Float)->mutable_data<float>(), eps_, Input(3).data<float>(), Input(4).data<float>()));
  }

 private:
  bool is_test_;
  double eps_;
  Workspace* ws_;
  BNDescs descs_;
  std::unique_ptr<OperatorBase> fallback_;
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(SpatialBN, CUDNN, CudnnSpatialBNOp);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(SpatialBNGradient, CUDNN, CudnnSpatialBNGradientOp);

}  // namespace hetnet
