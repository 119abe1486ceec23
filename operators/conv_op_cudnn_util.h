// cuDNN plumbing shared by the Conv and ConvTranspose CUDNN engines: descriptors from a
// ConvPoolGeom, algorithm choice (measured by cudnnFind*AlgorithmEx in temporary scratch, or with
// exhaustive_search=0 cuDNN's heuristics, cudnnGetConvolution*Algorithm_v7) restricted to algorithms
// whose workspace fits min(ws_nbytes_limit, global cap), cached per (shapes, args, dtype, limit),
// and float16 with tensor cores (CUDNN_TENSOR_OP_MATH, float32 accumulation). float32 uses
// CUDNN_FMA_MATH (no TF32) so results match the CPU kernels. Channels-last (NHWC) activations come
// with an NHWC (KRSC) filter descriptor: cuDNN's tensor-core kernels want both channels-last. Only
// *_cudnn.cc files include this.
#pragma once

#include <map>
#include <mutex>
#include <sstream>
#include <string>

#include "device/cuda/cudnn_context.h"
#include "device/cuda/cudnn_workspace.h"
#include "device/prepared_weights.h"
#include "operators/conv_pool_shape.h"
#include "operators/order_switch_ops.h"

namespace hetnet {

// Defined in transpose_op.cu.
template <>
void TransposeKernel<CUDAContext>(const StridedIndex& src, int64_t n, size_t item_size, const void* x, void* y,
                                  CUDAContext* ctx);
namespace cudnn_conv {

inline cudnnDataType_t DataTypeOf(const caffe2::OperatorDef& def, DataType t) {
  if (t == DataType::Float) return CUDNN_DATA_FLOAT;
  if (t == DataType::Float16) return CUDNN_DATA_HALF;
  HN_THROW(kInvalidArgument, def.type(), " (CUDNN): ", DataTypeName(t), " is not supported (float32, float16)");
}

struct Descs {
  cudnnTensorDescriptor_t in = nullptr, out = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Descs() {
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&in));
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&out));
    HN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias));
    HN_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    HN_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  }
  ~Descs() {
    cudnnDestroyTensorDescriptor(in);
    cudnnDestroyTensorDescriptor(out);
    cudnnDestroyTensorDescriptor(bias);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
  }
  Descs(const Descs&) = delete;
  Descs& operator=(const Descs&) = delete;

  // The convolution cuDNN sees: for Conv, in = X and out = Y; for ConvTranspose, in = Y and out = X
  // (ConvTranspose is the data gradient of that convolution). The filter is NCHW [M, C/group, kH, kW],
  // or with channels-last activations (Conv only, g.channels_last) NHWC [M, kH, kW, C/group].
  std::string Set(const ConvPoolGeom& g, ConvPoolKind kind, cudnnDataType_t dt) {
    const bool tr = kind == ConvPoolKind::ConvTranspose;
    const cudnnTensorFormat_t fmt = g.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const int64_t ic = tr ? g.M : g.C, ih = tr ? g.OH : g.H, iw = tr ? g.OW : g.W;
    const int64_t oc = tr ? g.C : g.M, oh = tr ? g.H : g.OH, ow = tr ? g.W : g.OW;
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(in, fmt, dt, (int)g.N, (int)ic, (int)ih, (int)iw));
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(out, fmt, dt, (int)g.N, (int)oc, (int)oh, (int)ow));
    HN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(bias, fmt, dt, 1, (int)g.M, 1, 1));
    HN_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, dt, fmt, (int)oc, (int)(ic / g.group), g.kh, g.kw));
    HN_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, g.pt, g.pl, g.sh, g.sw, g.dh, g.dw, CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
    HN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, g.group));
    HN_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, dt == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    std::ostringstream k;
    k << g.N << ',' << ic << ',' << ih << ',' << iw << ',' << oc << ',' << oh << ',' << ow << ',' << g.kh << ','
      << g.kw << ',' << g.sh << ',' << g.sw << ',' << g.pt << ',' << g.pl << ',' << g.dh << ',' << g.dw << ','
      << g.group << ',' << int(dt) << (g.channels_last ? ",nhwc" : "");
    return k.str();
  }
};

// The filter [M, C/group, kH, kW] as [M, kH, kW, C/group] (KRSC), for channels-last activations:
// activation_order NHWC keeps NCHW filters, cuDNN's NHWC kernels want KRSC. One transposed copy per
// filter version (device/prepared_weights.h: storage and write generation), shared by every op
// instance that reads it (a Predictor's child workspaces), made again after the filter changes, and
// reported beside the filter by the memory report. Storage owned elsewhere may change unseen (and a
// device checksum is not worth it): each op transposes such a filter on every run into its own copy.
struct KrscCopy {
  std::shared_ptr<void> data;
  size_t bytes = 0;
};
inline PreparedWeightCache<int, KrscCopy>& KrscCache() {
  // Never destroyed, as the CPU caches: operators may outlive static destruction order.
  static auto* cache =
      new PreparedWeightCache<int, KrscCopy>([](const KrscCopy& c) { return static_cast<int64_t>(c.bytes); });
  return *cache;
}

class KrscFilter {
 public:
  const void* Of(const caffe2::OperatorDef& def, const Tensor& f, CUDAContext* ctx) {
    HN_ENFORCE(f.ndim() == 4, def.type(), ": filter ('", def.input(1), "') must be 4-D, has shape ", f.ShapeString());
    if (f.external_storage()) {
      if (!own_.data || own_.bytes < f.nbytes()) own_ = KrscCopy{ctx->allocator()->Allocate(f.nbytes()), f.nbytes()};
      Transpose(def, f, own_.data.get(), ctx);
      return own_.data.get();
    }
    return shared_
        .Get(f, 0, KrscCache(),
             [&] {
               auto copy = std::make_shared<KrscCopy>(KrscCopy{ctx->allocator()->Allocate(f.nbytes()), f.nbytes()});
               Transpose(def, f, copy->data.get(), ctx);
               ctx->FinishDeviceComputation();  // ops on other streams may read it next
               return std::shared_ptr<const KrscCopy>(std::move(copy));
             })
        .data.get();
  }

 private:
  // [M, C/group, kH, kW] -> [M, kH, kW, C/group]: NCHW2NHWC's move.
  static void Transpose(const caffe2::OperatorDef& def, const Tensor& f, void* out, CUDAContext* ctx) {
    std::vector<int64_t> krsc_shape;
    const StridedIndex src = OrderSwitchSource(def, f.shape(), /*to_nchw=*/false, &krsc_shape);
    TransposeKernel<CUDAContext>(src, f.numel(), f.itemsize(), f.raw_data(), out, ctx);
  }
  PreparedWeight<int, KrscCopy> shared_;
  KrscCopy own_;  // external storage only
};


struct Algo {
  int algo = 0;
  size_t bytes = 0;
};

// Per-process cache: key -> chosen algorithm, one map per direction.
class AlgoCache {
 public:
  template <typename F>
  Algo Get(const std::string& key, F choose) {
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = m_.find(key);
      if (it != m_.end()) return it->second;
    }
    Algo a = choose();
    std::lock_guard<std::mutex> g(mu_);
    return m_.emplace(key, a).first->second;
  }

 private:
  std::mutex mu_;
  std::map<std::string, Algo> m_;
};

// Picks the first (fastest by cuDNN's ranking or measurement) successful result that fits `limit`.
template <typename Perf>
Algo PickFitting(const Perf* perf, int n, size_t limit, const char* what) {
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit)
      return Algo{static_cast<int>(perf[i].algo), perf[i].memory};
  HN_THROW(kUnsupported, "cuDNN: no ", what, " algorithm fits the workspace limit of ", limit,
           " bytes (raise ws_nbytes_limit)");
}

inline size_t WorkspaceLimit(int64_t ws_nbytes_limit) {
  const size_t op = ws_nbytes_limit >= 0 ? static_cast<size_t>(ws_nbytes_limit) : kCudnnDefaultWsLimit;
  const size_t cap = CudnnWorkspaceGlobalCap();
  return op < cap ? op : cap;
}

}  // namespace cudnn_conv
}  // namespace hetnet
