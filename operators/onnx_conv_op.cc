#include "operators/onnx_conv_op.h"

#include "core/checked_size.h"
#include "operators/onnx_op_util.h"
#include "operators/onnx_pool_op.h"

namespace hetnet {

void OnnxConvOp::RunOnDevice() {
  const Tensor &X = Input(0), &W = Input(1);
  const bool has_bias = InputSize() > 2 && !def().input(2).empty();
  const DataType t = X.dtype();
  HN_ENFORCE(t == DataType::Float || t == DataType::Double, type(), ": input 0 ('", def().input(0), "') is ",
             DataTypeName(t), "; float32 or float64 is required");
  for (int i = 1; i < (has_bias ? 3 : 2); ++i)
    HN_ENFORCE(Input(i).dtype() == t, type(), ": input ", i, " ('", def().input(i), "') is ",
               DataTypeName(Input(i).dtype()), " but input 0 is ", DataTypeName(t));
  const int k = X.ndim() - 2;
  HN_ENFORCE(k >= 1 && W.ndim() == k + 2, type(), ": input 0 ('", def().input(0), "', ", X.ShapeString(),
             ") and weight (input 1, '", def().input(1), "', ", W.ShapeString(), ") need [N, C, spatial...] and [M, "
             "C / group, kernel...] of one rank >= 3");
  const int64_t group = GetSingleArgument<int64_t>("group", 1), N = X.dim(0), C = X.dim(1), M = W.dim(0);
  HN_ENFORCE(group >= 1 && C % group == 0 && M % group == 0 && W.dim(1) == C / group, type(), ": group ", group,
             " does not fit ", C, " input channels ('", def().input(0), "') and weight ('", def().input(1), "') ",
             W.ShapeString());
  if (has_bias)
    HN_ENFORCE(Input(2).numel() == M && Input(2).ndim() == 1, type(), ": bias (input 2, '", def().input(2),
               "') has shape ", Input(2).ShapeString(), "; [", M, "] is required");
  std::vector<int64_t> kernel(W.shape().begin() + 2, W.shape().end());
  const auto ks = GetRepeatedArgument<int64_t>("kernel_shape", kernel);
  HN_ENFORCE(ks == kernel, type(), ": arg kernel_shape ", ShapeToString(ks), " differs from the weight's ",
             ShapeToString(kernel));
  const auto strides = GetRepeatedArgument<int64_t>("strides", std::vector<int64_t>(k, 1)),
             dil = GetRepeatedArgument<int64_t>("dilations", std::vector<int64_t>(k, 1)),
             pads = GetRepeatedArgument<int64_t>("pads", std::vector<int64_t>(2 * k, 0));
  HN_ENFORCE(static_cast<int>(strides.size()) == k && static_cast<int>(dil.size()) == k &&
                 static_cast<int>(pads.size()) == 2 * k,
             type(), ": strides, dilations (", k, " values each) and pads (", 2 * k, ") must match the kernel");
  for (int i = 0; i < k; ++i)
    HN_ENFORCE(strides[i] >= 1 && dil[i] >= 1 && pads[i] >= 0 && pads[k + i] >= 0 && strides[i] <= (int64_t{1} << 30) &&
                   dil[i] <= (int64_t{1} << 30) && pads[i] <= (int64_t{1} << 30) && pads[k + i] <= (int64_t{1} << 30),
               type(), ": strides and dilations must be in [1, 2^30], pads in [0, 2^30] (dim ", i, ")");
  const std::string auto_pad = GetSingleArgument<std::string>("auto_pad", "NOTSET");
  std::vector<int64_t> out(k), begin(k), shape = {N, M};
  for (int i = 0; i < k; ++i) {
    const WindowDim w = ComputeWindowDim(*this, i + 2, X.dim(i + 2), kernel[i], strides[i], dil[i], pads[i],
                                         pads[k + i], auto_pad, false);
    out[i] = w.out, begin[i] = w.pad_begin;
    shape.push_back(w.out);
  }
  CheckedNumel(shape, "OnnxConv output");
  Tensor* Y = Output(0, shape, t);
  int64_t in_sp = 1, out_sp = 1, taps = 1;
  for (int i = 0; i < k; ++i) in_sp *= X.dim(i + 2), out_sp *= out[i], taps *= kernel[i];
  const int64_t cg = C / group, mg = M / group;
  std::vector<int64_t> oc(k);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o = 0; o < out_sp; ++o) {
        for (int64_t rem = o, i = k - 1; i >= 0; --i) oc[i] = rem % out[i], rem /= out[i];
        double acc = has_bias ? ElementAsDouble(*this, Input(2), 2, m) : 0.0;
        for (int64_t tap = 0; tap < taps; ++tap) {
          int64_t flat = 0;
          bool inside = true;
          for (int64_t rem = tap, i = k - 1, stride = 1; i >= 0; --i) {
            const int64_t j = rem % kernel[i];
            rem /= kernel[i];
            const int64_t c = oc[i] * strides[i] - begin[i] + j * dil[i];
            inside &= c >= 0 && c < X.dim(static_cast<int>(i) + 2);
            flat += c * stride;
            stride *= X.dim(static_cast<int>(i) + 2);
          }
          if (!inside) continue;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t xc = (m / mg) * cg + ci;
            acc += ElementAsDouble(*this, X, 0, (n * C + xc) * in_sp + flat) *
                   ElementAsDouble(*this, W, 1, (m * cg + ci) * taps + tap);
          }
        }
        const int64_t at = (n * M + m) * out_sp + o;
        if (t == DataType::Float) Y->mutable_data<float>()[at] = static_cast<float>(acc);
        else Y->mutable_data<double>()[at] = acc;
      }
}

OPERATOR_SCHEMA(OnnxConv).NumInputs(2, 3).NumOutputs(1)
    .SetDoc("ONNX's Conv over any number of spatial dims (strides, dilations, pads, auto_pad, group); float32/64, "
            "plain loops. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxConv, OnnxConvOp);

}  // namespace hetnet
