#include "operators/deform_conv_op.h"

#include <cmath>

#include "core/checked_size.h"
#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

DeformConvOp::DeformConvOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      strides_(GetRepeatedArgument<int64_t>("strides", {1, 1})),
      pads_(GetRepeatedArgument<int64_t>("pads", {0, 0, 0, 0})),
      dilations_(GetRepeatedArgument<int64_t>("dilations", {1, 1})),
      group_(GetSingleArgument<int64_t>("group", 1)),
      offset_group_(GetSingleArgument<int64_t>("offset_group", 1)),
      has_bias_(GetSingleArgument<int64_t>("has_bias", 0) != 0),
      has_mask_(GetSingleArgument<int64_t>("has_mask", 0) != 0) {
  HN_ENFORCE(strides_.size() == 2 && pads_.size() == 4 && dilations_.size() == 2, def.type(),
             ": 2-D only: strides and dilations need 2 values, pads 4");
  for (int i = 0; i < 2; ++i)
    HN_ENFORCE(strides_[i] > 0 && dilations_[i] > 0 && pads_[i] >= 0 && pads_[i + 2] >= 0, def.type(),
               ": strides and dilations must be positive, pads not negative");
  HN_ENFORCE(group_ > 0 && offset_group_ > 0, def.type(), ": group and offset_group must be positive");
  HN_ENFORCE(def.input_size() == 3 + has_bias_ + has_mask_, def.type(), ": has_bias/has_mask say ",
             3 + has_bias_ + has_mask_, " inputs, the op has ", def.input_size());
}

void DeformConvOp::RunOnDevice() {
  std::vector<int> same;
  for (int i = 1; i < InputSize(); ++i) same.push_back(i);
  DispatchFloat32Or64(*this, same, [this](auto t) { Compute<decltype(t)>(); });
}

template <typename T>
void DeformConvOp::Compute() {
  const Tensor &X = Input(0), &W = Input(1), &Off = Input(2);
  auto blob = [&](int i) { return std::string(" ('") + def().input(i) + "')"; };
  HN_ENFORCE(X.ndim() == 4 && W.ndim() == 4 && Off.ndim() == 4, type(), ": X", blob(0), " ", X.ShapeString(), ", W",
             blob(1), " ", W.ShapeString(), " and offset", blob(2), " ", Off.ShapeString(), " must be 4-D (2-D only)");
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), Wd = X.dim(3), OC = W.dim(0), kH = W.dim(2), kW = W.dim(3);
  HN_ENFORCE(C == W.dim(1) * group_ && OC % group_ == 0 && C % offset_group_ == 0, type(), ": W", blob(1), " ",
             W.ShapeString(), " does not fit X", blob(0), " ", X.ShapeString(), " with group ", group_,
             " and offset_group ", offset_group_);
  const int64_t OH = Off.dim(2), OW = Off.dim(3), taps = kH * kW;
  const int64_t eh = (kH - 1) * dilations_[0] + 1, ew = (kW - 1) * dilations_[1] + 1;
  HN_ENFORCE(Off.dim(0) == N && Off.dim(1) == offset_group_ * taps * 2 &&
                 OH == (H + pads_[0] + pads_[2] - eh) / strides_[0] + 1 && OW == (Wd + pads_[1] + pads_[3] - ew) / strides_[1] + 1,
             type(), ": offset", blob(2), " has shape ", Off.ShapeString(), "; [", N, ", ", offset_group_ * taps * 2, ", ",
             (H + pads_[0] + pads_[2] - eh) / strides_[0] + 1, ", ", (Wd + pads_[1] + pads_[3] - ew) / strides_[1] + 1,
             "] is required");
  const T* bias = nullptr;
  const T* mask = nullptr;
  if (has_bias_) {
    HN_ENFORCE(Input(3).numel() == OC && Input(3).ndim() == 1, type(), ": B", blob(3), " has shape ",
               Input(3).ShapeString(), "; [", OC, "] is required");
    bias = Input(3).data<T>();
  }
  if (has_mask_) {
    const Tensor& M = Input(3 + has_bias_);
    HN_ENFORCE(M.sizes() == std::vector<int64_t>({N, offset_group_ * taps, OH, OW}), type(), ": mask",
               blob(3 + has_bias_), " has shape ", M.ShapeString(), "; [", N, ", ", offset_group_ * taps, ", ", OH, ", ",
               OW, "] is required");
    mask = M.data<T>();
  }
  T* y = Output(0, {N, OC, OH, OW}, X.dtype())->template mutable_data<T>();
  CheckedNumel({N, OC, OH, OW}, "DeformConv Y");
  const T *x = X.data<T>(), *w = W.data<T>(), *off = Off.data<T>();
  const int64_t icg = C / group_, ocg = OC / group_, ico = C / offset_group_;
  auto sample = [&](const T* plane, double h, double v) {  // bilinear, zero outside
    if (!(h > -1 && h < H && v > -1 && v < Wd)) return 0.0;
    const int64_t h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(v));
    const double th = h - h0, tw = v - w0;
    double s = 0;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        const int64_t hh = h0 + a, ww = w0 + b;
        if (hh >= 0 && hh < H && ww >= 0 && ww < Wd)
          s += (a ? th : 1 - th) * (b ? tw : 1 - tw) * static_cast<double>(plane[hh * Wd + ww]);
      }
    return s;
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = bias ? static_cast<double>(bias[oc]) : 0.0;
          const int64_t g = oc / ocg;
          for (int64_t ic = g * icg; ic < (g + 1) * icg; ++ic) {
            const int64_t og = ic / ico;
            const T* plane = x + (n * C + ic) * H * Wd;
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < kW; ++kw) {
                const int64_t tap = og * taps + kh * kW + kw;
                const double dh = off[((n * offset_group_ * taps + tap) * 2 * OH + i) * OW + j];
                const double dw = off[(((n * offset_group_ * taps + tap) * 2 + 1) * OH + i) * OW + j];
                const double m = mask ? static_cast<double>(mask[((n * offset_group_ * taps + tap) * OH + i) * OW + j]) : 1.0;
                const double h = static_cast<double>(i * strides_[0] - pads_[0] + kh * dilations_[0]) + dh;
                const double v = static_cast<double>(j * strides_[1] - pads_[1] + kw * dilations_[1]) + dw;
                acc += static_cast<double>(w[((oc * icg + (ic - g * icg)) * kH + kh) * kW + kw]) * m * sample(plane, h, v);
              }
          }
          y[((n * OC + oc) * OH + i) * OW + j] = static_cast<T>(acc);
        }
}

OPERATOR_SCHEMA(DeformConv).NumInputs(3, 5).NumOutputs(1)
    .SetDoc("ONNX's DeformConv (2-D): convolution whose taps sample X bilinearly at learned offsets, optional "
            "mask and bias (present as args has_bias, has_mask say), groups and offset groups. float32/64. CPU only; "
            "no gradient.");
REGISTER_CPU_OPERATOR(DeformConv, DeformConvOp);

}  // namespace hetnet
