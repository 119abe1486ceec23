// MaxPool / AveragePool (NCHW; on CPU also order NHWC, forward) and their gradients (X, Y, dY) -> dX, Caffe2's semantics:
// - the window of output (oh, ow) is rows [oh*stride_h - pad_t, + kernel_h) (same for columns),
//   clipped to the input (padding never wins a max, and is never summed);
// - AveragePool divides by the clipped window's size, (b - t) * (r - l), unless
//   count_include_pad=1, which divides by kernel_h * kernel_w (Caffe2's pool_op.cc; note that
//   this is not Caffe's "window clipped to the padded input");
// - MaxPoolGradient gives dY to every input equal to the window's max (ties all receive it).
// The per-element math is written once below (host + device) and run by a CPU loop (pool_op.cc)
// and a CUDA kernel (pool_op.cu); the gradient is a gather over the windows covering each input.
// The CUDNN engine (pool_op_cudnn.cc) takes the symmetric-padding cases.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/bfloat16.h"
#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/conv_pool_shape.h"

#if defined(__CUDACC__)
#define HN_POOL_HD __host__ __device__
#else
#define HN_POOL_HD
#endif

namespace hetnet {

struct PoolParams {
  int64_t N, C, H, W, OH, OW;
  int kh, kw, sh, sw, pt, pl;
  bool count_include_pad;
  bool channels_last = false;  // x [N, H, W, C], y [N, OH, OW, C] (CPU forward only)
};

HN_POOL_HD inline void PoolWindow(const PoolParams& p, int64_t oh, int64_t ow, int64_t* t, int64_t* b, int64_t* l,
                                  int64_t* r) {
  const int64_t hs = oh * p.sh - p.pt, ws = ow * p.sw - p.pl;
  *t = hs > 0 ? hs : 0;
  *l = ws > 0 ? ws : 0;
  *b = hs + p.kh < p.H ? hs + p.kh : p.H;
  *r = ws + p.kw < p.W ? ws + p.kw : p.W;
}

HN_POOL_HD inline float PoolAverageScale(const PoolParams& p, int64_t t, int64_t b, int64_t l, int64_t r) {
  const int64_t n = p.count_include_pad ? static_cast<int64_t>(p.kh) * p.kw : (b - t) * (r - l);
  return n > 0 ? 1.f / static_cast<float>(n) : 0.f;
}

// Output element idx of [N, C, OH, OW].
template <bool kMax>
HN_POOL_HD inline float PoolForwardAt(const PoolParams& p, int64_t idx, const float* x) {
  const int64_t ow = idx % p.OW, oh = (idx / p.OW) % p.OH, nc = idx / (p.OW * p.OH);
  int64_t t, b, l, r;
  PoolWindow(p, oh, ow, &t, &b, &l, &r);
  const float* xp = x + nc * p.H * p.W;
  float acc = kMax ? -std::numeric_limits<float>::max() : 0.f;
  for (int64_t h = t; h < b; ++h)
    for (int64_t w = l; w < r; ++w) {
      const float v = xp[h * p.W + w];
      if (kMax) acc = v > acc ? v : acc;
      else acc += v;
    }
  return kMax ? acc : acc * PoolAverageScale(p, t, b, l, r);
}

// Input element idx of [N, C, H, W]: the sum over the windows that contain it.
template <bool kMax>
HN_POOL_HD inline float PoolBackwardAt(const PoolParams& p, int64_t idx, const float* x, const float* y,
                                       const float* dy) {
  const int64_t w = idx % p.W, h = (idx / p.W) % p.H, nc = idx / (p.W * p.H);
  // Windows with oh*sh - pt <= h < oh*sh - pt + kh.
  const int64_t hh = h + p.pt, ww = w + p.pl;
  const int64_t oh0 = hh < p.kh ? 0 : (hh - p.kh) / p.sh + 1, oh1 = hh / p.sh + 1 < p.OH ? hh / p.sh + 1 : p.OH;
  const int64_t ow0 = ww < p.kw ? 0 : (ww - p.kw) / p.sw + 1, ow1 = ww / p.sw + 1 < p.OW ? ww / p.sw + 1 : p.OW;
  const float xv = kMax ? x[idx] : 0.f;
  const int64_t base = nc * p.OH * p.OW;
  float s = 0.f;
  for (int64_t oh = oh0; oh < oh1; ++oh)
    for (int64_t ow = ow0; ow < ow1; ++ow) {
      const int64_t o = base + oh * p.OW + ow;
      if (kMax) {
        if (y[o] == xv) s += dy[o];
      } else {
        int64_t t, b, l, r;
        PoolWindow(p, oh, ow, &t, &b, &l, &r);
        s += dy[o] * PoolAverageScale(p, t, b, l, r);
      }
    }
  return s;
}

template <class Context, bool kMax>
void PoolForward(const PoolParams& p, const float* x, float* y, Context* ctx);
template <class Context, bool kMax>
void PoolBackward(const PoolParams& p, const float* x, const float* y, const float* dy, float* dx, Context* ctx);
// bfloat16, order NHWC, CPU (reduced-precision inference): float32 arithmetic, outputs rounded once.
void PoolForwardBf16Cpu(bool max, const PoolParams& p, const BFloat16* x, BFloat16* y);

// The pooling ops' arguments (conv_pool_shape.h's rules). With global_pooling, Caffe2 refused a
// stride or pad only when its value was not the default, and its translator (caffe_translator.py)
// writes the defaults out: `kernel: 0, stride: 1, pad: 0` (or the _h/_w and plural forms). A family
// (the stride arguments, the pad arguments) whose every given value is the default is dropped here
// before parsing; any other value keeps conv_pool_shape.h's refusal. (kernel 0 needs nothing:
// global pooling ignores the kernel.)
inline ConvPoolArgs ParsePoolArgs(const caffe2::OperatorDef& def, bool allow_channels_last = false,
                                  bool allow_blocked = false) {
  ArgumentHelper a(def);
  if (a.GetSingleArgument<int>("global_pooling", 0) == 0) return ParseConvPoolArgs(def, ConvPoolKind::Pool, allow_channels_last, allow_blocked);
  struct Family {
    std::vector<const char*> singular;
    const char* plural;
    int default_value;
  };
  const Family families[] = {{{"stride", "stride_h", "stride_w"}, "strides", 1},
                             {{"pad", "pad_t", "pad_l", "pad_b", "pad_r"}, "pads", 0}};
  std::vector<std::string> drop;
  for (const Family& f : families) {
    bool all_default = true;
    std::vector<std::string> given;
    for (const char* name : f.singular) {
      if (!a.HasArgument(name)) continue;
      given.push_back(name);
      all_default &= a.GetSingleArgument<int>(name, f.default_value) == f.default_value;
    }
    if (a.HasArgument(f.plural)) {
      given.push_back(f.plural);
      for (int v : a.GetRepeatedArgument<int>(f.plural)) all_default &= v == f.default_value;
    }
    if (all_default) drop.insert(drop.end(), given.begin(), given.end());
  }
  if (drop.empty()) return ParseConvPoolArgs(def, ConvPoolKind::Pool, allow_channels_last, allow_blocked);
  caffe2::OperatorDef trimmed = def;
  trimmed.clear_arg();
  for (const auto& arg : def.arg())
    if (std::find(drop.begin(), drop.end(), arg.name()) == drop.end()) *trimmed.add_arg() = arg;
  return ParseConvPoolArgs(trimmed, ConvPoolKind::Pool, allow_channels_last, allow_blocked);
}

inline PoolParams MakePoolParams(const ConvPoolGeom& g, bool count_include_pad) {
  if (g.channel_block)  // blocked [N, C/b, H, W, b]: the order NHWC kernels on N*C/b images of b channels
    return PoolParams{g.N * (g.C / g.channel_block), g.channel_block, g.H, g.W, g.OH, g.OW, g.kh, g.kw, g.sh, g.sw,
                      g.pt, g.pl, count_include_pad, true};
  return PoolParams{g.N, g.C, g.H, g.W, g.OH, g.OW, g.kh, g.kw, g.sh, g.sw, g.pt, g.pl, count_include_pad, g.channels_last};
}

template <class Context, bool kMax>
class PoolOp final : public Operator<Context> {
 public:
  // order NHWC and the blocked orders: the CPU kernels only (pool_op.cc).
  PoolOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        args_(ParsePoolArgs(def, std::is_same<Context, CPUContext>::value, std::is_same<Context, CPUContext>::value)),
        count_include_pad_(this->template GetSingleArgument<int>("count_include_pad", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    if constexpr (std::is_same<Context, CPUContext>::value) {
      if (X.dtype() == DataType::BFloat16) return RunBf16(X);
    }
    EnforceFloatInput(this->def(), X, 0);
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::Pool, args_, X.shape());
    HN_ENFORCE(g.C % std::max(g.channel_block, 1) == 0, this->def().type(), ": input 0 ('", this->def().input(0), "') ",
               X.ShapeString(), " has ", g.C, " channels, not a whole number of blocks of ", g.channel_block,
               " (order NCHW", g.channel_block, "c)");
    Tensor* Y = this->Output(0, g.y_shape(), DataType::Float);
    PoolForward<Context, kMax>(MakePoolParams(g, count_include_pad_), X.template data<float>(),
                               Y->template mutable_data<float>(), &this->context_);
  }

 private:
  void RunBf16(const Tensor& X) {
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::Pool, args_, X.shape());
    HN_CHECK_KIND(kUnsupported, g.channels_last, this->def().type(), ": input 0 ('", this->def().input(0),
                  "') is bfloat16, which runs only with order NHWC (reduced-precision inference)");
    Tensor* Y = this->Output(0, g.y_shape(), DataType::BFloat16);
    PoolForwardBf16Cpu(kMax, MakePoolParams(g, count_include_pad_), X.template data<BFloat16>(),
                       Y->template mutable_data<BFloat16>());
  }

  ConvPoolArgs args_;
  bool count_include_pad_;
};

template <class Context, bool kMax>
class PoolGradientOp final : public Operator<Context> {
 public:
  PoolGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), args_(ParsePoolArgs(def)),
        count_include_pad_(this->template GetSingleArgument<int>("count_include_pad", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& Y = this->Input(1);
    const Tensor& dY = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const ConvPoolGeom g = ComputeConvPoolGeom(this->def(), ConvPoolKind::Pool, args_, X.shape());
    HN_ENFORCE(Y.shape() == g.y_shape() && dY.shape() == g.y_shape(), this->def().type(), ": Y ('",
               this->def().input(1), "') ", Y.ShapeString(), " and dY ('", this->def().input(2), "') ",
               dY.ShapeString(), " must have the pooled shape ", ShapeToString(g.y_shape()));
    Tensor* dX = this->Output(0, X.shape(), DataType::Float);
    PoolBackward<Context, kMax>(MakePoolParams(g, count_include_pad_), X.template data<float>(),
                                Y.template data<float>(), dY.template data<float>(),
                                dX->template mutable_data<float>(), &this->context_);
  }

 private:
  ConvPoolArgs args_;
  bool count_include_pad_;
};

}  // namespace hetnet
