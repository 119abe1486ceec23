#include "operators/resize_interp_op.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "operators/cast_ops.h"

namespace hetnet {

namespace {

bool IsClose(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// ONNX reference coefficient functions (onnx/reference/ops/op_resize.py), ratio in (0, 1].
void LinearCoeffs(double ratio, double scale, bool antialias, std::vector<double>* c) {
  if (!antialias) {
    *c = {1 - ratio, ratio};
    return;
  }
  scale = std::min(scale, 1.0);
  const int64_t start = static_cast<int64_t>(std::floor(-1 / scale) + 1);
  const int64_t footprint = 2 - 2 * start;
  c->resize(footprint);
  double sum = 0;
  for (int64_t i = 0; i < footprint; ++i) {
    const double arg = (static_cast<double>(start + i) - ratio) * scale;
    (*c)[i] = std::min(std::max(1 - std::fabs(arg), 0.0), 1.0);
    sum += (*c)[i];
  }
  for (double& v : *c) v /= sum;
}

void CubicCoeffs(double ratio, double scale, double A, bool antialias, std::vector<double>* c) {
  if (!antialias) {
    const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    *c = {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
          ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
    return;
  }
  scale = std::min(scale, 1.0);
  auto coeff = [A](double x) {
    x = std::fabs(x);
    const double x2 = x * x, x3 = x * x2;
    if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0.0;
  };
  const int64_t i_start = static_cast<int64_t>(std::floor(-2 / scale) + 1), i_end = 2 - i_start;
  c->clear();
  double sum = 0;
  for (int64_t i = i_start; i < i_end; ++i) {
    c->push_back(coeff(scale * (static_cast<double>(i) - ratio)));
    sum += c->back();
  }
  for (double& v : *c) v /= sum;
}

void NearestCoeffs(double ratio, bool integer, const std::string& mode, std::vector<double>* c) {
  bool right = true;
  if (!integer) {
    if (mode == "round_prefer_floor") right = ratio > 0.5;
    else if (mode == "round_prefer_ceil") right = ratio >= 0.5;
    else right = mode == "ceil";
  }
  *c = {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
}

int64_t Product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

}  // namespace

ResizeInterpPlan MakeResizeInterpPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                      const std::vector<double>& roi, const std::vector<double>& scales,
                                      const std::vector<int64_t>& sizes) {
  ArgumentHelper a(def);
  const int64_t r = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = a.GetRepeatedArgument<int64_t>("axes");
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  std::set<int64_t> seen;
  for (int64_t& ax : axes) {
    HN_ENFORCE(ax >= -r && ax < r, def.type(), ": axis ", ax, " is out of range for input '", def.input(0),
               "' of rank ", r);
    if (ax < 0) ax += r;
    HN_ENFORCE(seen.insert(ax).second, def.type(), ": axis ", ax, " is repeated in `axes`");
  }
  const size_t na = axes.size();
  ResizeInterpPlan p{std::vector<double>(r, 1.0), x, std::vector<double>(r, 0.0), std::vector<double>(r, 1.0)};
  if (!roi.empty()) {
    HN_ENFORCE(roi.size() == 2 * na, def.type(), ": roi has ", roi.size(), " values; want ", 2 * na,
               " (start and end for each resized axis)");
    for (size_t i = 0; i < na; ++i) {
      p.roi_start[axes[i]] = roi[i];
      p.roi_end[axes[i]] = roi[na + i];
    }
  }
  if (!scales.empty()) {
    HN_ENFORCE(scales.size() == na, def.type(), ": scales has ", scales.size(), " values; want ", na,
               " (one per resized axis of input '", def.input(0), "')");
    for (size_t i = 0; i < na; ++i) {
      HN_ENFORCE(scales[i] > 0 && std::isfinite(scales[i]), def.type(), ": scale ", scales[i], " must be positive");
      p.scale[axes[i]] = scales[i];
      p.out[axes[i]] = static_cast<int64_t>(std::floor(scales[i] * static_cast<double>(x[axes[i]])));
    }
    return p;
  }
  HN_ENFORCE(sizes.size() == na, def.type(), ": give scales or sizes (sizes has ", sizes.size(), " values; want ", na,
             ")");
  for (size_t i = 0; i < na; ++i) {
    HN_ENFORCE(sizes[i] >= 0, def.type(), ": sizes must not be negative (", sizes[i], ")");
    HN_ENFORCE(x[axes[i]] > 0, def.type(), ": cannot resize the empty axis ", axes[i], " of input '", def.input(0),
               "' to a size");
    p.scale[axes[i]] = static_cast<double>(sizes[i]) / static_cast<double>(x[axes[i]]);
    p.out[axes[i]] = sizes[i];
  }
  const std::string policy = a.GetSingleArgument<std::string>("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") {
    HN_ENFORCE(policy == "not_larger" || policy == "not_smaller", def.type(), ": keep_aspect_ratio_policy '",
               policy, "' is not stretch, not_larger or not_smaller");
    double s = p.scale[axes[0]];
    for (int64_t ax : axes) s = policy == "not_larger" ? std::min(s, p.scale[ax]) : std::max(s, p.scale[ax]);
    for (int64_t ax : axes) {
      p.scale[ax] = s;
      p.out[ax] = static_cast<int64_t>(s * static_cast<double>(x[ax]) + 0.5);
    }
  }
  return p;
}

ResizeInterpOp::ResizeInterpOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      mode_(GetSingleArgument<std::string>("mode", "nearest")),
      ctm_(GetSingleArgument<std::string>("coordinate_transformation_mode", "half_pixel")),
      nearest_mode_(GetSingleArgument<std::string>("nearest_mode", "round_prefer_floor")),
      cubic_a_(GetSingleArgument<float>("cubic_coeff_a", -0.75f)),
      extrapolation_(GetSingleArgument<float>("extrapolation_value", 0.f)),
      exclude_outside_(GetSingleArgument<int>("exclude_outside", 0) != 0),
      antialias_(GetSingleArgument<int>("antialias", 0) != 0),
      roi_input_(GetSingleArgument<int>("roi_input", -1)),
      scales_input_(GetSingleArgument<int>("scales_input", -1)),
      sizes_input_(GetSingleArgument<int>("sizes_input", -1)) {
  HN_ENFORCE(mode_ == "nearest" || mode_ == "linear" || mode_ == "cubic", def.type(), ": mode '", mode_,
             "' is not nearest, linear or cubic");
  static const std::set<std::string> kCtm = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                             "align_corners", "asymmetric", "tf_crop_and_resize"};
  HN_ENFORCE(kCtm.count(ctm_), def.type(), ": coordinate_transformation_mode '", ctm_, "' is not supported");
  HN_ENFORCE(nearest_mode_ == "round_prefer_floor" || nearest_mode_ == "round_prefer_ceil" || nearest_mode_ == "floor" ||
                 nearest_mode_ == "ceil",
             def.type(), ": nearest_mode '", nearest_mode_, "' is not supported");
  HN_ENFORCE(!(antialias_ && mode_ == "nearest"), def.type(), ": antialias needs mode linear or cubic");
  for (int i : {roi_input_, scales_input_, sizes_input_})
    HN_ENFORCE(i == -1 || (i >= 1 && i < InputSize()), def.type(), ": an input index arg (", i,
               ") names no input of the ", InputSize(), " given");
}

std::vector<double> ResizeInterpOp::ReadReals(int i, const char* what) {
  if (i < 0) return {};
  const Tensor& t = Input(i);
  HN_ENFORCE(t.dtype() == DataType::Float || t.dtype() == DataType::Double || t.dtype() == DataType::Float16, type(),
             ": ", what, " (input '", def().input(i), "') must be a float tensor, not ", DataTypeName(t.dtype()));
  std::vector<double> v(t.numel());
  CastKernel<CPUContext>(t.dtype(), DataType::Double, t.numel(), t.raw_data(), v.data(), false, &context_);
  return v;
}

void ResizeInterpOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() == DataType::Float || X.dtype() == DataType::Double || X.dtype() == DataType::Float16, type(),
             ": input 0 ('", def().input(0), "') must be float, double or float16, not ", DataTypeName(X.dtype()));
  std::vector<double> roi = ReadReals(roi_input_, "roi"), scales = ReadReals(scales_input_, "scales");
  std::vector<int64_t> sizes;
  if (scales.empty() && sizes_input_ >= 0) {
    const Tensor& s = Input(sizes_input_);
    HN_ENFORCE(s.dtype() == DataType::Int64 || s.dtype() == DataType::Int32, type(), ": sizes (input '",
               def().input(sizes_input_), "') must be int64, not ", DataTypeName(s.dtype()));
    sizes.resize(s.numel());
    CastKernel<CPUContext>(s.dtype(), DataType::Int64, s.numel(), s.raw_data(), sizes.data(), false, &context_);
  }
  const ResizeInterpPlan p = MakeResizeInterpPlan(def(), X.shape(), roi, scales, sizes);
  std::vector<int64_t> dims = X.shape();
  std::vector<double> cur(X.numel());
  CastKernel<CPUContext>(X.dtype(), DataType::Double, X.numel(), X.raw_data(), cur.data(), false, &context_);
  std::vector<double> c;
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool trivial_roi = roi.empty() || (p.roi_start[d] == 0.0 && IsClose(p.roi_end[d], 1.0));
    if (IsClose(p.scale[d], 1.0) && p.out[d] == dims[d] && trivial_roi) continue;
    const int64_t W = dims[d], O = p.out[d], outer = Product(dims, 0, d), inner = Product(dims, d + 1, dims.size());
    HN_ENFORCE(W > 0 || O == 0, type(), ": cannot resize the empty axis ", d, " of input '", def().input(0), "'");
    const double s = p.scale[d], ow = s * static_cast<double>(W), wd = static_cast<double>(W);
    std::vector<double> next(outer * O * inner);
    for (int64_t j = 0; j < O; ++j) {
      const double y = static_cast<double>(j);
      double xo = 0;
      bool extrapolate = false;
      if (ctm_ == "align_corners") {
        xo = ow == 1 ? 0.0 : y * (wd - 1) / (ow - 1);
      } else if (ctm_ == "asymmetric") {
        xo = y / s;
      } else if (ctm_ == "tf_crop_and_resize") {
        const double r0 = p.roi_start[d], r1 = p.roi_end[d];
        xo = ow == 1 ? (r1 - r0) * (wd - 1) / 2 : y * (r1 - r0) * (wd - 1) / (ow - 1);
        xo = xo + r0 * (wd - 1);
        extrapolate = xo < 0 || xo > wd - 1;
      } else if (ctm_ == "pytorch_half_pixel") {
        xo = ow == 1 ? -0.5 : (y + 0.5) / s - 0.5;
      } else if (ctm_ == "half_pixel") {
        xo = (y + 0.5) / s - 0.5;
      } else {  // half_pixel_symmetric
        const double adjustment = static_cast<double>(O) / ow, center = wd / 2, offset = center * (1 - adjustment);
        xo = offset + (y + 0.5) / s - 0.5;
      }
      if (extrapolate) {
        for (int64_t o = 0; o < outer; ++o)
          std::fill_n(next.begin() + (o * O + j) * inner, inner, static_cast<double>(extrapolation_));
        continue;
      }
      HN_ENFORCE(std::isfinite(xo), type(), ": the source coordinate of output ", j, " on axis ", d, " is not finite");
      const double fl = std::floor(xo);
      const bool integer = xo == fl;
      const double ratio = integer ? 1.0 : xo - fl;
      if (mode_ == "nearest") NearestCoeffs(ratio, integer, nearest_mode_, &c);
      else if (mode_ == "linear") LinearCoeffs(ratio, s, antialias_, &c);
      else CubicCoeffs(ratio, s, cubic_a_, antialias_, &c);
      const int64_t n = static_cast<int64_t>(c.size());
      const int64_t start = static_cast<int64_t>(fl) + (integer ? -(n / 2) : -(n / 2) + 1);
      if (exclude_outside_) {
        double sum = 0;
        for (int64_t k = 0; k < n; ++k) {
          if (start + k < 0 || start + k >= W) c[k] = 0;
          sum += c[k];
        }
        if (sum == 0) sum = 1;
        for (double& v : c) v /= sum;
      }
      for (int64_t o = 0; o < outer; ++o) {
        double* dst = next.data() + (o * O + j) * inner;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t src = std::min(std::max(start + k, int64_t{0}), W - 1);
          const double* row = cur.data() + (o * W + src) * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] += c[k] * row[i];
        }
      }
    }
    cur.swap(next);
    dims[d] = O;
  }
  Tensor* Y = Output(0, dims, X.dtype());
  CastKernel<CPUContext>(DataType::Double, X.dtype(), Y->numel(), cur.data(), Y->raw_mutable_data(X.dtype()), false,
                         &context_);
}

OPERATOR_SCHEMA(ResizeInterp)
    .NumInputs(1, 4)
    .NumOutputs(1)
    .SetDoc("ResizeInterp(X, [roi], [scales], [sizes]) -> Y: ONNX Resize (nearest / linear / cubic, every "
            "coordinate_transformation_mode, antialias, axes, keep_aspect_ratio_policy) on the CPU. Args "
            "roi_input / scales_input / sizes_input give the inputs' indices (-1 absent).");
REGISTER_CPU_OPERATOR(ResizeInterp, ResizeInterpOp);

}  // namespace hetnet
