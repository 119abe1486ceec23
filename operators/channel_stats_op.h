// ChannelStats(X) -> sum, sumsq: per channel, the sum of X and of X^2 over every other dimension
// (Caffe2's op, used by data_parallel_model's combine_spatial_bn and hetnet's sync BN to combine
// batch-norm statistics across devices and processes).
//   arg order: "NCHW" (default; channel = dim 1) or "NHWC" (channel = last dim); X is 2-D or more.
//   arg dtype (hetnet): "float" (default, as Caffe2) or "double" for the outputs. Accumulation is
//   in float64 either way; "double" keeps Q/M - mean^2 exact enough when |mean| >> std.
// Also the channel layout that SpatialBN and ChannelBackpropStats share.
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// X as [N, C, HW] in either order: element (n, c, k) is at n * sn + c * sc + k * ss, and the
// element at linear index i has channel (i / sc) % C.
struct ChannelLayout {
  int64_t N = 0, C = 0, HW = 1;
  int64_t sn = 0, sc = 1, ss = 1;
  HN_HOST_DEVICE int64_t numel() const { return N * C * HW; }
};

// The layout of input `input` of shape x for the def's `order` arg (NCHW or NHWC; 2-D or more).
inline ChannelLayout ChannelLayoutOf(const caffe2::OperatorDef& def, const std::vector<int64_t>& x, int input = 0) {
  const std::string order = ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW");
  HN_ENFORCE(order == "NCHW" || order == "NHWC", def.type(), ": arg order must be NCHW or NHWC, got '", order, "'");
  HN_ENFORCE(x.size() >= 2, def.type(), ": input ", input, " ('", def.input(input), "') has shape ", ShapeToString(x),
             " but at least 2 dims (N, C, spatial...) are required");
  ChannelLayout d;
  d.N = x[0];
  if (order == "NCHW") {
    d.C = x[1];
    d.HW = ProdDims(x, 2, x.size());
    d.sn = d.C * d.HW, d.sc = d.HW, d.ss = 1;
  } else {
    d.C = x.back();
    d.HW = ProdDims(x, 1, x.size() - 1);
    d.sn = d.C * d.HW, d.sc = 1, d.ss = d.C;
  }
  return d;
}

// Calls f(offset, channel) for every element, in memory order (CPU loops).
template <class F>
void ForEachChannelElement(const ChannelLayout& d, F f) {
  if (d.sc == 1) {  // NHWC: rows of C
    for (int64_t r = 0; r < d.N * d.HW; ++r)
      for (int64_t c = 0; c < d.C; ++c) f(r * d.C + c, c);
  } else {
    for (int64_t nc = 0; nc < d.N * d.C; ++nc)
      for (int64_t k = 0; k < d.HW; ++k) f(nc * d.HW + k, nc % d.C);
  }
}

#if defined(__CUDACC__)
// Block-wide float64 sums a, b of f(offset, a, b) over channel blockIdx.x's elements (one block per
// channel, blockDim.x a power of two <= 256); every thread gets the totals.
template <class F>
__device__ void BlockChannelSums(const ChannelLayout d, F f, double& a, double& b) {
  __shared__ double sa[256], sb[256];
  const int64_t c = blockIdx.x;
  double ta = 0, tb = 0;
  for (int64_t j = threadIdx.x; j < d.N * d.HW; j += blockDim.x) f(c * d.sc + (j / d.HW) * d.sn + (j % d.HW) * d.ss, ta, tb);
  sa[threadIdx.x] = ta;
  sb[threadIdx.x] = tb;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) {
      sa[threadIdx.x] += sa[threadIdx.x + w];
      sb[threadIdx.x] += sb[threadIdx.x + w];
    }
    __syncthreads();
  }
  a = sa[0];
  b = sb[0];
  __syncthreads();
}
#endif

// sum[c] = sum of x, sumsq[c] = sum of x^2 over channel c (float64 accumulation); T is float or double.
template <class Context, typename T>
void ChannelSums(const ChannelLayout& d, const float* x, T* sum, T* sumsq, Context* ctx);

// The output dtype the `dtype` arg names (Float by default).
inline DataType ChannelStatsDtype(const caffe2::OperatorDef& def) {
  const std::string t = ArgumentHelper(def).GetSingleArgument<std::string>("dtype", "float");
  if (t == "float" || t == "float32") return DataType::Float;
  if (t == "double" || t == "float64") return DataType::Double;
  HN_THROW(kInvalidArgument, def.type(), ": arg dtype must be \"float\" or \"double\", got '", t, "'");
}

template <class Context>
class ChannelStatsOp final : public Operator<Context> {
 public:
  ChannelStatsOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), dtype_(ChannelStatsDtype(def)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    EnforceFloatInput(this->def(), X, 0);
    const ChannelLayout d = ChannelLayoutOf(this->def(), X.shape());
    Tensor* S = this->Output(0, {d.C}, dtype_);
    Tensor* Q = this->Output(1, {d.C}, dtype_);
    if (dtype_ == DataType::Double)
      ChannelSums<Context, double>(d, X.template data<float>(), S->template mutable_data<double>(),
                                   Q->template mutable_data<double>(), &this->context_);
    else
      ChannelSums<Context, float>(d, X.template data<float>(), S->template mutable_data<float>(),
                                  Q->template mutable_data<float>(), &this->context_);
    if (this->OutputSize() > 2) WriteCount(static_cast<double>(d.N) * static_cast<double>(d.HW));
  }

 private:
  // Output 2 (hetnet's): the element count per channel as a [1] tensor of the stats' dtype, from the
  // shape alone (sync BN's count, without a pass over X). Copied from the host on the op's stream
  // (from pageable memory the copy has left `v` when CopyBytes returns).
  void WriteCount(double count) {
    Tensor* M = this->Output(2, {1}, dtype_);
    const float f = static_cast<float>(count);
    const void* v = dtype_ == DataType::Double ? static_cast<const void*>(&count) : static_cast<const void*>(&f);
    this->context_.CopyBytes(M->nbytes(), v, Device::CPU(), M->raw_mutable_data(dtype_), M->device());
  }
  DataType dtype_;
};

}  // namespace hetnet
