#include "operators/onnx_pool_op.h"

#include <cmath>
#include <limits>

#include "core/checked_size.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

OnnxPoolOp::OnnxPoolOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
  const std::string m = GetSingleArgument<std::string>("mode", "max");
  HN_ENFORCE(m == "max" || m == "avg" || m == "lp", def.type(), ": arg mode is '", m, "'; max, avg or lp");
  mode_ = m == "max" ? Mode::kMax : m == "avg" ? Mode::kAvg : Mode::kLp;
  kernel_ = GetRepeatedArgument<int64_t>("kernel_shape");
  const size_t k = kernel_.size();
  HN_ENFORCE(k >= 1, def.type(), ": arg kernel_shape is required");
  strides_ = GetRepeatedArgument<int64_t>("strides", std::vector<int64_t>(k, 1));
  dilations_ = GetRepeatedArgument<int64_t>("dilations", std::vector<int64_t>(k, 1));
  pads_ = GetRepeatedArgument<int64_t>("pads", std::vector<int64_t>(2 * k, 0));
  HN_ENFORCE(strides_.size() == k && dilations_.size() == k && pads_.size() == 2 * k, def.type(),
             ": strides, dilations (", k, " values each) and pads (", 2 * k, ") must match kernel_shape");
  for (size_t i = 0; i < k; ++i)
    HN_ENFORCE(kernel_[i] >= 1 && strides_[i] >= 1 && dilations_[i] >= 1 && pads_[i] >= 0 && pads_[k + i] >= 0 &&
                   kernel_[i] <= (int64_t{1} << 30) && strides_[i] <= (int64_t{1} << 30) &&
                   dilations_[i] <= (int64_t{1} << 30) && pads_[i] <= (int64_t{1} << 30) && pads_[k + i] <= (int64_t{1} << 30),
               def.type(), ": kernel_shape, strides and dilations must be in [1, 2^30], pads in [0, 2^30] (dim ", i, ")");
  auto_pad_ = GetSingleArgument<std::string>("auto_pad", "NOTSET");
  HN_ENFORCE(auto_pad_ == "NOTSET" || auto_pad_ == "VALID" || auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER",
             def.type(), ": arg auto_pad is '", auto_pad_, "'");
  ceil_ = GetSingleArgument<int>("ceil_mode", 0) != 0;
  include_pad_ = GetSingleArgument<int>("count_include_pad", 0) != 0;
  column_major_ = GetSingleArgument<int>("storage_order", 0) != 0;
  p_ = GetSingleArgument<float>("p", 2.f);
  HN_ENFORCE(mode_ != Mode::kLp || p_ > 0, def.type(), ": arg p must be positive, not ", p_);
  HN_ENFORCE(def.output_size() == 1 || mode_ == Mode::kMax, def.type(), ": only mode max has an Indices output");
}

WindowDim ComputeWindowDim(const OperatorBase& op, int dim, int64_t in, int64_t kernel, int64_t stride,
                           int64_t dilation, int64_t pb, int64_t pe, const std::string& auto_pad, bool ceil) {
  const int64_t window = dilation * (kernel - 1) + 1, s = stride;
  WindowDim w;
  if (auto_pad == "VALID") {
    pb = pe = 0;
    w.out = in >= window ? (in - window) / s + 1 : 0;
  } else if (auto_pad != "NOTSET") {  // SAME_*
    w.out = in == 0 ? 0 : (in - 1) / s + 1;
    const int64_t total = std::max<int64_t>(0, (w.out - 1) * s + window - in);
    pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pe = total - pb;
  } else {
    const int64_t span = in + pb + pe - window;
    HN_ENFORCE(span >= 0, op.type(), ": the dilated kernel (", window, ") is larger than padded dim ", dim,
               " of input 0 ('", op.def().input(0), "')");
    w.out = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && (w.out - 1) * s >= in + pb) --w.out;
  }
  w.pad_begin = pb;
  w.limit = in + pe;
  return w;
}

void OnnxPoolOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const int k = static_cast<int>(kernel_.size());
  HN_ENFORCE(X.ndim() == k + 2, type(), ": input 0 ('", def().input(0), "') has shape ", X.ShapeString(), "; a ", k,
             "-D kernel needs [N, C] and ", k, " spatial dims");
  const DataType t = X.dtype();
  const bool max_type = t == DataType::Int8 || t == DataType::UInt8 || t == DataType::Int32;
  HN_ENFORCE(t == DataType::Float || t == DataType::Double || t == DataType::Float16 || (max_type && mode_ == Mode::kMax),
             type(), ": input 0 ('", def().input(0), "') is ", DataTypeName(t), "; float16/32/64",
             mode_ == Mode::kMax ? ", int8, uint8 or int32" : "", " is required");
  std::vector<int64_t> in(k), out(k), begin(k), limit(k), shape = {X.dim(0), X.dim(1)};
  for (int i = 0; i < k; ++i) {
    in[i] = X.dim(i + 2);
    const WindowDim w = ComputeWindowDim(*this, i + 2, in[i], kernel_[i], strides_[i], dilations_[i], pads_[i],
                                         pads_[k + i], auto_pad_, ceil_);
    out[i] = w.out;
    begin[i] = w.pad_begin;
    limit[i] = w.limit;
    shape.push_back(out[i]);
  }
  CheckedNumel(shape, "OnnxPool output");
  Tensor* Y = Output(0, shape, t);
  int64_t* indices = OutputSize() > 1 ? Output(1, shape, DataType::Int64)->mutable_data<int64_t>() : nullptr;
  int64_t spatial = 1, out_spatial = 1, taps = 1;
  for (int i = 0; i < k; ++i) spatial *= in[i], out_spatial *= out[i], taps *= kernel_[i];
  const int64_t planes = X.dim(0) * X.dim(1);
  auto run = [&](auto zero, auto to_double, auto from_double) {
    using T = decltype(zero);
    const T* x = X.template data<T>();
    T* y = Y->template mutable_data<T>();
    std::vector<int64_t> oc(k), tc(k);
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t o = 0; o < out_spatial; ++o) {
        for (int64_t rem = o, i = k - 1; i >= 0; --i) oc[i] = rem % out[i], rem /= out[i];
        double acc = mode_ == Mode::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t counted = 0, real = 0, best = -1;
        for (int64_t tap = 0; tap < taps; ++tap) {
          bool dropped = false, inside = true;
          int64_t flat = 0, col = 0, col_stride = 1;
          for (int64_t rem = tap, i = k - 1; i >= 0; --i) {
            const int64_t j = rem % kernel_[i];
            rem /= kernel_[i];
            const int64_t c = oc[i] * strides_[i] - begin[i] + j * dilations_[i];
            dropped |= c >= limit[i];
            inside &= c >= 0 && c < in[i];
            tc[i] = c;
          }
          if (dropped) continue;
          ++counted;
          if (!inside) continue;
          for (int i = 0; i < k; ++i) flat = flat * in[i] + tc[i];
          for (int i = 0; i < k; ++i) col += tc[i] * col_stride, col_stride *= in[i];
          const double v = to_double(x[plane * spatial + flat]);
          ++real;
          if (mode_ == Mode::kMax) {
            if (best < 0 || v > acc || (std::isnan(v) && !std::isnan(acc))) acc = v, best = column_major_ ? col : flat;
          } else {
            acc += mode_ == Mode::kAvg ? v : std::pow(std::fabs(v), p_);
          }
        }
        double r = acc;
        if (mode_ == Mode::kAvg) r = acc / static_cast<double>(include_pad_ ? counted : real);
        if (mode_ == Mode::kLp) r = std::pow(acc, 1.0 / p_);
        if (mode_ != Mode::kMax && (include_pad_ ? counted : real) == 0) r = std::numeric_limits<double>::quiet_NaN();
        y[plane * out_spatial + o] = from_double(r);
        if (indices) indices[plane * out_spatial + o] = best < 0 ? -1 : plane * spatial + best;
      }
  };
  auto plain = [&](auto zero) {
    using T = decltype(zero);
    run(zero, [](T v) { return static_cast<double>(v); }, [](double v) { return static_cast<T>(v); });
  };
  switch (t) {
    case DataType::Float16:
      return run(Half{}, [](Half v) { return static_cast<double>(HalfToFloat(v)); },
                 [](double v) { return FloatToHalf(static_cast<float>(v)); });
    case DataType::Float: return plain(float{});
    case DataType::Double: return plain(double{});
    case DataType::Int8: return plain(int8_t{});
    case DataType::UInt8: return plain(uint8_t{});
    default: return plain(int32_t{});
  }
}

OPERATOR_SCHEMA(OnnxPool).NumInputs(1).NumOutputs(1, 2)
    .SetDoc("ONNX's MaxPool / AveragePool / LpPool (arg mode max / avg / lp) over any number of spatial dims with "
            "dilations, ceil_mode, count_include_pad, auto_pad, p, and MaxPool's Indices output (storage_order). "
            "CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxPool, OnnxPoolOp);

}  // namespace hetnet
