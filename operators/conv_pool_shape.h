// Shape logic of Conv, ConvTranspose and the pooling operators, written once and used by the CPU
// and CUDA kernels, the cuDNN operators and the schemas' shape inference. Caffe2's argument names
// and rules (ConvPoolOpBase / ConvTransposeUnpoolBase), 2-D NCHW:
//   kernel | kernel_h, kernel_w | kernels        (Conv: taken from the filter when none is given)
//   stride | stride_h, stride_w | strides        (default 1)
//   pad | pad_t, pad_l, pad_b, pad_r | pads      (default 0; pads = [t, l, b, r])
//   dilation | dilation_h, dilation_w | dilations (default 1)
//   group (default 1), global_pooling, legacy_pad (NOTSET 0, VALID 1, SAME 2,
//   CAFFE_LEGACY_POOLING 3), adj | adj_h, adj_w | adjs (ConvTranspose).
// Output size per spatial dim (dk = dilation * (kernel - 1) + 1):
//   NOTSET: 1 + (in + pad_head + pad_tail - dk) / stride
//   VALID:  pads 0; (in - dk + stride) / stride
//   SAME:   (dilation 1) target = ceil(in / stride); pad_needed = (target - 1) * stride + kernel - in;
//           pad_head = pad_needed / 2, pad_tail = the rest; out = (in + pad_needed - dk) / stride + 1
//   CAFFE_LEGACY_POOLING (Caffe's ceil mode): out = ceil((in + 2 pad_head - kernel) / stride + 1),
//           minus one when pad_head > 0 and the last window would start in the tail padding;
//           pad_tail = pad_head + stride * (out - floor-mode out).
//   ConvTranspose: NOTSET: (in - 1) * stride + dk + adj - pad_head - pad_tail; VALID, SAME:
//           pads 0, (in - 1) * stride + dk + adj. (N-D ConvTranspose: conv_transpose_nd.h.)
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/argument.h"
#include "core/error.h"
#include "core/tensor.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

enum class LegacyPadding { NOTSET = 0, VALID = 1, SAME = 2, CAFFE_LEGACY_POOLING = 3 };
enum class ConvPoolKind { Conv, ConvTranspose, Pool };

// The parsed arguments (before the input size is known).
struct ConvPoolArgs {
  int kernel[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1}, adj[2] = {0, 0};
  int pads[4] = {0, 0, 0, 0};  // t, l, b, r
  int group = 1;
  bool global_pooling = false;
  bool kernel_given = false;
  LegacyPadding legacy_pad = LegacyPadding::NOTSET;
  // Activations [N, H, W, C] (see ParseConvPoolArgs); a Conv's filter is [M, C/group, kH, kW],
  // or with Caffe2's order NHWC (filter_hwc) [M, kH, kW, C/group].
  bool channels_last = false;
  bool filter_hwc = false;
  // Blocked activations (core/blocked_activations_pass.h): 8 or 16, else 0. See ChannelBlockOf.
  int channel_block = 0;
};

// The geometry of one run: NCHW input, output, kernel, effective pads (after legacy padding).
struct ConvPoolGeom {
  int64_t N = 0, C = 0, H = 0, W = 0;  // input
  int64_t M = 0, OH = 0, OW = 0;       // output channels (C for pooling) and spatial size
  int kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
  int pt = 0, pl = 0, pb = 0, pr = 0;
  int group = 1;
  bool channels_last = false;  // X is [N, H, W, C] and Y [N, OH, OW, M]
  bool filter_hwc = false;     // Conv's filter [M, kH, kW, C/group] (Caffe2's order NHWC)
  // Blocked activations: X and Y keep their NCHW shapes, their bytes are oneDNN's nChw8c / nChw16c
  // ([N, C/b, H, W, b]); a Conv's X is blocked only when its channels divide by b (else plain NCHW:
  // a first layer's image).
  int channel_block = 0;
  bool blocked_input() const { return channel_block > 0 && C % channel_block == 0; }
  std::vector<int64_t> y_shape() const {
    return channels_last ? std::vector<int64_t>{N, OH, OW, M} : std::vector<int64_t>{N, M, OH, OW};
  }
  std::vector<int64_t> filter_shape(ConvPoolKind k) const {
    if (k == ConvPoolKind::ConvTranspose) return {C, M / group, kh, kw};
    return filter_hwc ? std::vector<int64_t>{M, kh, kw, C / group} : std::vector<int64_t>{M, C / group, kh, kw};
  }
};

// Checked sizes of a computed geometry (conv_pool_shape.cc): the output and, for Conv and
// ConvTranspose, the im2col buffer must have a representable element count (core/checked_size.h),
// so huge pads, strides or kernels fail here with the operator named instead of in Im2Col.
void CheckConvPoolGeomSizes(const std::string& op, ConvPoolKind kind, const ConvPoolGeom& g);

namespace conv_shape_detail {
// A value computed in int64 stored into an int field (pads, kernels): kInvalidArgument when it does not fit.
inline int FitInt(const std::string& op, const char* what, int64_t v) {
  HN_ENFORCE(v >= -2147483647LL - 1 && v <= 2147483647LL, op, ": ", what, " ", v, " does not fit in a 32-bit int");
  return static_cast<int>(v);
}
inline std::string OpName(const caffe2::OperatorDef& def) {
  return def.type() + (def.name().empty() ? "" : " '" + def.name() + "'");
}
// Reads `one` (both dims), else `h`/`w`, else `many` (2 values); returns whether any was given.
inline bool ReadPair(const caffe2::OperatorDef& def, const ArgumentHelper& a, const char* one, const char* h,
                     const char* w, const char* many, int out[2]) {
  if (a.HasArgument(one)) {
    out[0] = out[1] = a.GetSingleArgument<int>(one, 0);
    return true;
  }
  if (a.HasArgument(h) || a.HasArgument(w)) {
    HN_ENFORCE(a.HasArgument(h) && a.HasArgument(w), OpName(def), ": give both ", h, " and ", w);
    out[0] = a.GetSingleArgument<int>(h, 0);
    out[1] = a.GetSingleArgument<int>(w, 0);
    return true;
  }
  if (a.HasArgument(many)) {
    auto v = a.GetRepeatedArgument<int>(many);
    HN_CHECK_KIND(kUnsupported, v.size() < 3, OpName(def), ": argument '", many, "' has ", v.size(),
                  " values but this kernel runs only 2-D (NCHW) (the N-D form runs only in ConvTranspose's CPU "
                  "forward kernel)");
    HN_ENFORCE(v.size() == 2, OpName(def), ": argument '", many, "' has ", v.size(),
               " values but only 2-D (NCHW) is supported");
    out[0] = v[0];
    out[1] = v[1];
    return true;
  }
  return false;
}
}  // namespace conv_shape_detail

// True when the pads are symmetric (t == b, l == r): the only padding cuDNN's convolutions and pools
// express.
inline bool SymmetricPads(const ConvPoolGeom& g) { return g.pt == g.pb && g.pl == g.pr; }

// The channel block of a blocked layout's name ("NCHW8c" 8, "NCHW16c" 16), else 0.
inline int ChannelBlockOf(const std::string& order) { return order == "NCHW8c" ? 8 : order == "NCHW16c" ? 16 : 0; }

// Channels-last activations, only where the caller's kernels run them (allow_channels_last: the CPU
// pooling kernels, the DNNL Conv's forward, and the CUDNN engine's Conv forward and pools): Caffe2's
// `order: "NHWC"` (for Conv, the filter is then [M, kH, kW, C/group]), and Conv with hetnet's
// `activation_order: "NHWC"` (set by the inference layout pass, core/channels_last_pass.h), which
// keeps the NCHW filter [M, C/group, kH, kW].
// Blocked activations (allow_blocked: the CPU pooling kernels and the DNNL Conv's forward): pooling's
// `order: "NCHW8c"` / "NCHW16c" and Conv's `activation_order` of those names (set by
// core/blocked_activations_pass.h).
inline ConvPoolArgs ParseConvPoolArgs(const caffe2::OperatorDef& def, ConvPoolKind kind,
                                      bool allow_channels_last = false, bool allow_blocked = false) {
  using namespace conv_shape_detail;
  ArgumentHelper a(def);
  ConvPoolArgs r;
  const std::string op = OpName(def);
  const std::string order = a.GetSingleArgument<std::string>("order", "NCHW");
  const std::string activations = a.GetSingleArgument<std::string>("activation_order", "NCHW");
  if (kind != ConvPoolKind::ConvTranspose && order == "NHWC") {
    HN_CHECK_KIND(kUnsupported, allow_channels_last, op, ": order 'NHWC' is not supported by this kernel (NCHW only",
                  kind == ConvPoolKind::Conv ? "; the DNNL engine's CPU Conv and the CUDNN engine's Conv run NHWC)" : ")");
    r.channels_last = true;
    r.filter_hwc = kind == ConvPoolKind::Conv;
  } else {
    HN_CHECK_KIND(kUnsupported, order == "NCHW" || ChannelBlockOf(order), op, ": order '", order,
                  "' is not supported (NCHW only)");
  }
  const int order_block = ChannelBlockOf(order), activation_block = ChannelBlockOf(activations);
  if (order_block) {  // pooling over blocked activations
    HN_CHECK_KIND(kUnsupported, kind == ConvPoolKind::Pool && allow_blocked, op, ": order '", order,
                  "' is only run by the CPU pooling kernels");
    r.channel_block = order_block;
  } else if (activation_block) {
    HN_CHECK_KIND(kUnsupported, kind == ConvPoolKind::Conv && allow_blocked && order == "NCHW", op,
                  ": activation_order '", activations, "' is only run by the DNNL engine's CPU Conv");
    r.channel_block = activation_block;
  } else if (activations != "NCHW") {
    HN_CHECK_KIND(kUnsupported, kind == ConvPoolKind::Conv && activations == "NHWC" && allow_channels_last &&
                                    !r.filter_hwc, op,
                  ": activation_order '", activations,
                  "' is only run by the DNNL engine's CPU Conv and the CUDNN engine's Conv (activation_order NHWC)");
    r.channels_last = true;
  }
  r.kernel_given = ReadPair(def, a, "kernel", "kernel_h", "kernel_w", "kernels", r.kernel);
  ReadPair(def, a, "stride", "stride_h", "stride_w", "strides", r.stride);
  ReadPair(def, a, "dilation", "dilation_h", "dilation_w", "dilations", r.dilation);
  ReadPair(def, a, "adj", "adj_h", "adj_w", "adjs", r.adj);
  bool pads_given = false;
  if (a.HasArgument("pad")) {
    const int p = a.GetSingleArgument<int>("pad", 0);
    for (int& x : r.pads) x = p;
    pads_given = true;
  } else if (a.HasArgument("pad_t") || a.HasArgument("pad_l") || a.HasArgument("pad_b") || a.HasArgument("pad_r")) {
    const char* names[4] = {"pad_t", "pad_l", "pad_b", "pad_r"};
    for (int i = 0; i < 4; ++i) {
      HN_ENFORCE(a.HasArgument(names[i]), op, ": give all of pad_t, pad_l, pad_b, pad_r (", names[i], " is missing)");
      r.pads[i] = a.GetSingleArgument<int>(names[i], 0);
    }
    pads_given = true;
  } else if (a.HasArgument("pads")) {
    auto v = a.GetRepeatedArgument<int>("pads");
    HN_ENFORCE(v.size() == 4, op, ": argument 'pads' has ", v.size(), " values; 2-D needs 4 ([t, l, b, r])");
    for (int i = 0; i < 4; ++i) r.pads[i] = v[i];
    pads_given = true;
  }
  r.group = a.GetSingleArgument<int>("group", 1);
  r.global_pooling = a.GetSingleArgument<int>("global_pooling", 0) != 0;
  const int lp = a.GetSingleArgument<int>("legacy_pad", 0);
  HN_ENFORCE(lp >= 0 && lp <= 3, op, ": legacy_pad ", lp, " is not one of NOTSET 0, VALID 1, SAME 2, CAFFE_LEGACY_POOLING 3");
  r.legacy_pad = static_cast<LegacyPadding>(lp);
  // Explicit pads of 0 are the defaults that Caffe2's writers (translator, brew) spell out; Caffe2
  // accepted them with global pooling and legacy padding, so only non-zero pads are refused there.
  const bool nonzero_pads = pads_given && (r.pads[0] || r.pads[1] || r.pads[2] || r.pads[3]);
  if (r.legacy_pad == LegacyPadding::VALID || r.legacy_pad == LegacyPadding::SAME)
    HN_ENFORCE(!nonzero_pads, op, ": with legacy_pad VALID or SAME no non-zero explicit pad may be given");
  HN_CHECK_KIND(kUnsupported, !(kind == ConvPoolKind::ConvTranspose && r.legacy_pad == LegacyPadding::CAFFE_LEGACY_POOLING),
                op, ": legacy_pad CAFFE_LEGACY_POOLING is not supported by ConvTranspose");
  HN_ENFORCE(!r.global_pooling || kind == ConvPoolKind::Pool, op, ": global_pooling is a pooling argument");
  if (r.global_pooling) {
    HN_ENFORCE(r.stride[0] == 1 && r.stride[1] == 1 && !nonzero_pads, op,
               ": global_pooling takes no stride or pad other than 1 and 0 (got stride ", r.stride[0], "x",
               r.stride[1], ", pads ", r.pads[0], ",", r.pads[1], ",", r.pads[2], ",", r.pads[3], ")");
  } else if (kind != ConvPoolKind::Conv) {
    HN_ENFORCE(r.kernel_given, op, ": needs a kernel (kernel, kernel_h/kernel_w or kernels)");
  }
  for (int i = 0; i < 2; ++i) {
    HN_ENFORCE(r.stride[i] > 0, op, ": stride must be positive, got ", r.stride[i]);
    HN_ENFORCE(r.dilation[i] > 0, op, ": dilation must be positive, got ", r.dilation[i]);
    HN_ENFORCE(!r.kernel_given || r.global_pooling || r.kernel[i] > 0, op, ": kernel must be positive, got ",
               r.kernel[0], "x", r.kernel[1]);
    HN_ENFORCE(r.adj[i] >= 0 && (r.adj[i] == 0 || r.adj[i] < r.stride[i]), op, ": adj ", r.adj[i],
               " must be in [0, stride ", r.stride[i], ")");
  }
  for (int p : r.pads) HN_ENFORCE(p >= 0, op, ": pads must be >= 0, got ", p);
  HN_ENFORCE(r.group >= 1, op, ": group must be >= 1, got ", r.group);
  HN_ENFORCE(kind != ConvPoolKind::Pool || (r.dilation[0] == 1 && r.dilation[1] == 1), op,
             ": pooling does not support dilation");
  return r;
}

// Caffe2's ComputeSizeAndPad for one dim (Conv and pooling). Updates the pads for legacy padding.
inline int64_t ConvPoolOutputSize(const std::string& op, int64_t in, int stride, int kernel, int dilation,
                                  LegacyPadding lp, int* pad_head, int* pad_tail) {
  const int64_t dk = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
  switch (lp) {
    case LegacyPadding::NOTSET:
      HN_ENFORCE(in + *pad_head + *pad_tail >= dk, op, ": input size ", in, " with pads ", *pad_head, "+", *pad_tail,
                 " is smaller than the (dilated) kernel ", dk);
      return 1 + (in + *pad_head + *pad_tail - dk) / stride;
    case LegacyPadding::VALID:
      *pad_head = *pad_tail = 0;
      HN_ENFORCE(in >= dk, op, ": input size ", in, " is smaller than the (dilated) kernel ", dk, " (legacy_pad VALID)");
      return (in - dk + stride) / stride;
    case LegacyPadding::SAME: {
      HN_ENFORCE(dilation == 1, op, ": dilation is not supported with legacy_pad SAME");
      const int64_t target = (in + stride - 1) / stride;
      const int64_t needed = (target - 1) * stride + kernel - in;
      *pad_head = conv_shape_detail::FitInt(op, "legacy_pad SAME padding", needed / 2);
      *pad_tail = conv_shape_detail::FitInt(op, "legacy_pad SAME padding", needed - *pad_head);
      return (in + needed - dk) / stride + 1;
    }
    case LegacyPadding::CAFFE_LEGACY_POOLING: {
      HN_ENFORCE(in + 2 * static_cast<int64_t>(*pad_head) >= kernel, op, ": input size ", in, " with pad ", *pad_head,
                 " is smaller than the kernel ", kernel);
      const int64_t span = in + 2 * static_cast<int64_t>(*pad_head) - kernel;
      int64_t out = static_cast<int64_t>(std::ceil(static_cast<double>(span) / stride + 1));
      if (*pad_head > 0 && (out - 1) * stride >= in + *pad_head) --out;
      const int64_t standard = span / stride + 1;
      HN_ENFORCE(out >= standard, op, ": CAFFE_LEGACY_POOLING output size ", out, " below the floor-mode size ", standard);
      *pad_tail = conv_shape_detail::FitInt(op, "CAFFE_LEGACY_POOLING tail padding",
                                            *pad_head + static_cast<int64_t>(stride) * (out - standard));
      return out;
    }
  }
  return 0;
}

// The geometry for input x (and, for Conv/ConvTranspose, filter w). Messages name blobs and shapes.
inline ConvPoolGeom ComputeConvPoolGeom(const caffe2::OperatorDef& def, ConvPoolKind kind, const ConvPoolArgs& a,
                                        const std::vector<int64_t>& x, const std::vector<int64_t>* w = nullptr,
                                        const std::vector<int64_t>* b = nullptr) {
  const std::string op = conv_shape_detail::OpName(def);
  HN_ENFORCE(x.size() == 4, op, ": input 0 ('", def.input(0), "') has shape ", ShapeToString(x), " but a 4-D ",
             a.channels_last ? "NHWC" : "NCHW", " tensor is required");
  // Channels-last inputs are the inference rewrite's `<blob>_nhwc` copies: say so in every message.
  const std::string xs = ShapeToString(x) + (a.channels_last ? " (NHWC)" : "");
  ConvPoolGeom g;
  g.channels_last = a.channels_last;
  g.filter_hwc = a.filter_hwc;
  g.channel_block = a.channel_block;
  if (a.channels_last) {
    g.N = x[0]; g.H = x[1]; g.W = x[2]; g.C = x[3];
  } else {
    g.N = x[0]; g.C = x[1]; g.H = x[2]; g.W = x[3];
  }
  g.sh = a.stride[0]; g.sw = a.stride[1]; g.dh = a.dilation[0]; g.dw = a.dilation[1];
  g.pt = a.pads[0]; g.pl = a.pads[1]; g.pb = a.pads[2]; g.pr = a.pads[3];
  g.group = a.group;
  g.kh = a.kernel[0]; g.kw = a.kernel[1];
  if (kind == ConvPoolKind::Pool) {
    g.M = g.C;
    if (a.global_pooling) {
      g.kh = conv_shape_detail::FitInt(op, "global pooling kernel (input height)", g.H);
      g.kw = conv_shape_detail::FitInt(op, "global pooling kernel (input width)", g.W);
    }
  } else {
    HN_ENFORCE(w && w->size() == 4, op, ": input 1 ('", def.input(1), "') has shape ",
               w ? ShapeToString(*w) : "?", " but a 4-D filter is required");
    const auto& f = *w;
    if (!a.kernel_given) {
      g.kh = static_cast<int>(f[a.filter_hwc ? 1 : 2]);
      g.kw = static_cast<int>(f[a.filter_hwc ? 2 : 3]);
    }
    HN_ENFORCE(g.C % g.group == 0, op, ": input channels ", g.C, " of '", def.input(0), "' ", xs,
               " are not divisible by group ", g.group);
    if (kind == ConvPoolKind::Conv) {
      g.M = f[0];
      HN_ENFORCE(g.M % g.group == 0, op, ": filter '", def.input(1), "' ", ShapeToString(f), " has ", g.M,
                 " output channels, not divisible by group ", g.group);
    } else {
      g.M = f[1] * g.group;
    }
    const auto want = g.filter_shape(kind);
    HN_ENFORCE(f == want, op, ": filter '", def.input(1), "' has shape ", ShapeToString(f), " but input '",
               def.input(0), "' ", xs, " with kernel ", g.kh, "x", g.kw, " and group ", g.group,
               " needs ", ShapeToString(want),
               kind == ConvPoolKind::ConvTranspose ? " (C, M/group, kH, kW)"
               : a.filter_hwc                      ? " (M, kH, kW, C/group: order NHWC)"
                                                   : " (M, C/group, kH, kW)");
    if (b) {
      HN_ENFORCE(b->size() == 1 && (*b)[0] == g.M, op, ": bias '", def.input(2), "' has shape ", ShapeToString(*b),
                 " but ", g.M, " output channels need [", g.M, "]");
    }
  }
  if (kind == ConvPoolKind::ConvTranspose) {
    auto tsize = [&](int64_t in, int s, int kernel, int d, int adj, int* ph, int* pt) {
      const int64_t k = static_cast<int64_t>(d) * (kernel - 1) + 1;  // the dilated kernel
      if (a.legacy_pad != LegacyPadding::NOTSET) *ph = *pt = 0;
      HN_ENFORCE(in - 1 <= (int64_t{1} << 62) / s, op, ": input size ", in, " with stride ", s,
                 " gives an output size that overflows");
      const int64_t out = (in - 1) * s + k + adj - *ph - *pt;
      HN_ENFORCE(out > 0, op, ": output size ", out, " is not positive (input ", in, ", stride ", s, ", kernel ", k,
                 ", pads ", *ph, "+", *pt, ")");
      return out;
    };
    g.OH = tsize(g.H, g.sh, g.kh, g.dh, a.adj[0], &g.pt, &g.pb);
    g.OW = tsize(g.W, g.sw, g.kw, g.dw, a.adj[1], &g.pl, &g.pr);
  } else {
    g.OH = ConvPoolOutputSize(op, g.H, g.sh, g.kh, g.dh, a.legacy_pad, &g.pt, &g.pb);
    g.OW = ConvPoolOutputSize(op, g.W, g.sw, g.kw, g.dw, a.legacy_pad, &g.pl, &g.pr);
  }
  CheckConvPoolGeomSizes(op, kind, g);
  return g;
}

}  // namespace hetnet
