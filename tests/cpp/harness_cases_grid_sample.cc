// Harness cases for GridSample (operators/grid_sample_op.*): a 2-D float64 reference in PyTorch's
// terms (unnormalize ix, iy; clip or reflect a coordinate outside the input; weights of the 1, 2x2 or 4x4 taps, each
// tap read with the padding rule: zero outside, clamped, or reflected). AffineGrid: theta times each
// point's (x, y, 1), the coordinates spaced evenly over [-1, 1] (pixel centres or corners).
// CenterCropPad: each output element found from its index shifted by the centring offsets.
// DeformConv: each tap's sample as the tent-weighted sum over every input pixel,
// sum_pq max(0, 1 - |h - p|) max(0, 1 - |w - q|) X[p, q]. RoiAlign (avg): the mean of the same tent
// sums at each bin's sample points (clamped into the image, zero beyond one pixel outside). The
// [grid_sample] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

std::string StrArg(const caffe2::OperatorDef& def, const std::string& name, const std::string& dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return dflt;
}

// Reflects x into [lo, hi] (mirror at each end).
double ReflectRef(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  double m = std::fmod(std::fabs(x - lo), 2 * span);  // distance from lo, folded into one period
  return m <= span ? lo + m : lo + 2 * span - m;
}

RefTensors GridSample2dRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &G = in[1];
  const std::string mode = StrArg(def, "mode", "linear"), pad = StrArg(def, "padding_mode", "zeros");
  bool align = false;
  for (const auto& a : def.arg())
    if (a.name() == "align_corners") align = a.i() != 0;
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3), OH = G.dim(1), OW = G.dim(2);
  RefTensor Y({N, C, OH, OW}, X.dtype);
  auto unnorm = [&](double v, int64_t size) { return align ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2; };
  auto fix = [&](double c, int64_t size) {  // the coordinate after the padding rule
    const double lo = align ? 0 : -0.5, hi = align ? size - 1 : size - 0.5;
    if (c >= lo && c <= hi) return c;  // ONNX moves only coordinates outside [lo, hi] (cubic sees it)
    if (pad == "border") return std::min(std::max(c, 0.0), static_cast<double>(size - 1));
    return pad == "reflection" ? ReflectRef(c, lo, hi) : c;
  };
  auto tap = [&](int64_t n, int64_t c, int64_t iy, int64_t ix) {  // one input pixel under the padding rule
    if (pad == "border") iy = std::min(std::max<int64_t>(iy, 0), H - 1), ix = std::min(std::max<int64_t>(ix, 0), W - 1);
    if (pad == "reflection") {
      iy = static_cast<int64_t>(ReflectRef(iy, align ? 0 : -0.5, align ? H - 1 : H - 0.5));
      ix = static_cast<int64_t>(ReflectRef(ix, align ? 0 : -0.5, align ? W - 1 : W - 0.5));
    }
    if (iy < 0 || iy >= H || ix < 0 || ix >= W) return 0.0;
    return X[((n * C + c) * H + iy) * W + ix];
  };
  auto cubic = [](double t, int k) {  // Keys, alpha -0.75, tap k in {-1, 0, 1, 2}
    const double a = -0.75, d = std::fabs(t - k);
    return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        const double gx = G[((n * OH + oy) * OW + ox) * 2], gy = G[((n * OH + oy) * OW + ox) * 2 + 1];
        double fx = static_cast<float>(unnorm(gx, W)), fy = static_cast<float>(unnorm(gy, H));
        if (mode == "nearest") fx = std::nearbyint(fx), fy = std::nearbyint(fy);
        fx = fix(fx, W), fy = fix(fy, H);
        for (int64_t c = 0; c < C; ++c) {
          double v = 0;
          if (mode == "nearest") {
            v = tap(n, c, static_cast<int64_t>(fy), static_cast<int64_t>(fx));
          } else {
            const int64_t x0 = static_cast<int64_t>(std::floor(fx)), y0 = static_cast<int64_t>(std::floor(fy));
            const double tx = fx - x0, ty = fy - y0;
            const int lo = mode == "cubic" ? -1 : 0, hi = mode == "cubic" ? 2 : 1;
            for (int ky = lo; ky <= hi; ++ky)
              for (int kx = lo; kx <= hi; ++kx) {
                const double w = mode == "cubic" ? cubic(ty, ky) * cubic(tx, kx)
                                                 : (ky ? ty : 1 - ty) * (kx ? tx : 1 - tx);
                v += w * tap(n, c, y0 + ky, x0 + kx);
              }
          }
          Y[((n * C + c) * OH + oy) * OW + ox] = v;
        }
      }
  return {Y};
}

caffe2::OperatorDef GS(const std::string& mode, const std::string& pad, int align) {
  return Op("GridSample", {"X", "G"}, {"Y"}, {Arg("mode", mode), Arg("padding_mode", pad), Arg("align_corners", align)});
}

RefTensors AffineGrid2dRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const bool align = def.arg_size() > 0 && def.arg(0).i() != 0;
  const RefTensor& th = in[0];
  const int64_t N = static_cast<int64_t>(in[1][0]), H = static_cast<int64_t>(in[1][2]), W = static_cast<int64_t>(in[1][3]);
  auto lin = [&](int64_t i, int64_t n) {  // evenly spaced: corners at +-1, or pixel centres
    return align ? (n == 1 ? -1.0 : -1.0 + 2.0 * i / (n - 1)) : (2.0 * i + 1) / n - 1.0;
  };
  RefTensor G({N, H, W, 2}, th.dtype);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int a = 0; a < 2; ++a)
          G[((n * H + y) * W + x) * 2 + a] =
              th[(n * 2 + a) * 3] * lin(x, W) + th[(n * 2 + a) * 3 + 1] * lin(y, H) + th[(n * 2 + a) * 3 + 2];
  return {G};
}

RefTensors CenterCropPadRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const int rank = static_cast<int>(X.shape.size());
  std::vector<int64_t> axes;
  for (const auto& a : def.arg())
    if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
  if (axes.empty())
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  std::vector<int64_t> shape = X.shape, shift(rank, 0);  // output index - shift = input index
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = (axes[k] + rank) % rank, want = static_cast<int64_t>(in[1][k]);
    shift[a] = want >= X.shape[a] ? (want - X.shape[a]) / 2 : -((X.shape[a] - want) / 2);
    shape[a] = want;
  }
  RefTensor Y(shape, X.dtype);
  for (int64_t e = 0; e < Y.numel(); ++e) {
    int64_t rem = e, xi = 0, stride = 1;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = rem % shape[d] - shift[d];
      rem /= shape[d];
      inside = inside && i >= 0 && i < X.shape[d];
      xi += i * stride, stride *= X.shape[d];
    }
    Y[e] = inside ? X[xi] : 0.0;
  }
  return {Y};
}

RefTensors DeformConvRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  int64_t group = 1, ogroups = 1, has_bias = 0, has_mask = 0;
  std::vector<int64_t> st{1, 1}, pad{0, 0, 0, 0}, dil{1, 1};
  for (const auto& a : def.arg()) {
    if (a.name() == "group") group = a.i();
    if (a.name() == "offset_group") ogroups = a.i();
    if (a.name() == "has_bias") has_bias = a.i();
    if (a.name() == "has_mask") has_mask = a.i();
    if (a.name() == "strides") st.assign(a.ints().begin(), a.ints().end());
    if (a.name() == "pads") pad.assign(a.ints().begin(), a.ints().end());
    if (a.name() == "dilations") dil.assign(a.ints().begin(), a.ints().end());
  }
  const RefTensor &X = in[0], &W = in[1], &O = in[2];
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), Wd = X.dim(3), OC = W.dim(0), kH = W.dim(2), kW = W.dim(3);
  const int64_t OH = O.dim(2), OW = O.dim(3), icg = C / group;
  RefTensor Y({N, OC, OH, OW}, X.dtype);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = has_bias ? in[3][oc] : 0.0;
          for (int64_t c = 0; c < icg; ++c) {
            const int64_t ic = oc / (OC / group) * icg + c, og = ic / (C / ogroups);
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < kW; ++kw) {
                const int64_t tap = (og * kH + kh) * kW + kw;
                const double h = i * st[0] - pad[0] + kh * dil[0] + O[((n * O.dim(1) + 2 * tap) * OH + i) * OW + j];
                const double w = j * st[1] - pad[1] + kw * dil[1] + O[((n * O.dim(1) + 2 * tap + 1) * OH + i) * OW + j];
                double v = 0;
                for (int64_t p = 0; p < H; ++p)
                  for (int64_t q = 0; q < Wd; ++q)
                    v += std::max(0.0, 1 - std::fabs(h - p)) * std::max(0.0, 1 - std::fabs(w - q)) * X[((n * C + ic) * H + p) * Wd + q];
                const double m = has_mask ? in[3 + has_bias][((n * ogroups * kH * kW + tap) * OH + i) * OW + j] : 1.0;
                acc += W[((oc * icg + c) * kH + kh) * kW + kw] * m * v;
              }
          }
          Y[((n * OC + oc) * OH + i) * OW + j] = acc;
        }
  return {Y};
}

// Bilinear value of plane at (y, x) as tent weights over all pixels, with RoiAlign's edge rules.
double Tent(const RefTensor& X, int64_t plane, double y, double x) {
  const int64_t H = X.dim(2), W = X.dim(3);
  if (y < -1.0 || y > H || x < -1.0 || x > W) return 0.0;
  y = std::min(std::max(y, 0.0), static_cast<double>(H - 1)), x = std::min(std::max(x, 0.0), static_cast<double>(W - 1));
  double v = 0;
  for (int64_t p = 0; p < H; ++p)
    for (int64_t q = 0; q < W; ++q)
      v += std::max(0.0, 1 - std::fabs(y - p)) * std::max(0.0, 1 - std::fabs(x - q)) * X[plane * H * W + p * W + q];
  return v;
}

RefTensors RoiAlignAvgRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  int64_t oh = 1, ow = 1, ratio = 0;
  double scale = 1;
  bool half = true;
  for (const auto& a : def.arg()) {
    if (a.name() == "output_height") oh = a.i();
    if (a.name() == "output_width") ow = a.i();
    if (a.name() == "sampling_ratio") ratio = a.i();
    if (a.name() == "spatial_scale") scale = a.f();
    if (a.name() == "coordinate_transformation_mode") half = a.s() == "half_pixel";
  }
  const RefTensor &X = in[0], &rois = in[1];
  const int64_t C = X.dim(1), R = rois.dim(0);
  RefTensor Y({R, C, oh, ow}, X.dtype);
  for (int64_t r = 0; r < R; ++r) {
    const double sh = half ? 0.5 : 0.0, x0 = rois[r * 4] * scale - sh, y0 = rois[r * 4 + 1] * scale - sh;
    double w = rois[r * 4 + 2] * scale - sh - x0, h = rois[r * 4 + 3] * scale - sh - y0;
    if (!half) w = std::max(w, 1.0), h = std::max(h, 1.0);
    const int64_t gy = ratio ? ratio : static_cast<int64_t>(std::ceil(h / oh)), gx = ratio ? ratio : static_cast<int64_t>(std::ceil(w / ow));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          for (int64_t a = 0; a < gy; ++a)
            for (int64_t b = 0; b < gx; ++b)
              sum += Tent(X, static_cast<int64_t>(in[2][r]) * C + c, y0 + (i + (a + 0.5) / gy) * h / oh,
                          x0 + (j + (b + 0.5) / gx) * w / ow);
          Y[((r * C + c) * oh + i) * ow + j] = sum / std::max<int64_t>(gy * gx, 1);
        }
  }
  return {Y};
}

}  // namespace

HN_OP_CASES(GridSample) {
  std::vector<Case> c;
  for (const char* mode : {"linear", "nearest", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (int align : {0, 1})
        c.push_back(Case(std::string(mode) + " " + pad + (align ? " align_corners" : ""))
                        .Def(GS(mode, pad, align))
                        .Inputs({In({2, 2, 4, 5}), In({2, 3, 4, 2}).Range(-1.6, 1.6)})
                        .Ref(GridSample2dRef));
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(AffineGrid) {
  std::vector<Case> c;
  for (int align : {0, 1})
    c.push_back(Case(align ? "2-D align_corners" : "2-D")
                    .Def(Op("AffineGrid", {"T", "S"}, {"G"}, {Arg("align_corners", align)}))
                    .Inputs({In({2, 2, 3}), In({4}, DataType::Int64).Values({2, 3, 4, 5})})
                    .Ref(AffineGrid2dRef));
  c.push_back(Case("2-D, height 1, align_corners").Def(Op("AffineGrid", {"T", "S"}, {"G"}, {Arg("align_corners", 1)}))
                  .Inputs({In({1, 2, 3}), In({4}, DataType::Int64).Values({1, 1, 1, 3})}).Ref(AffineGrid2dRef));
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(DeformConv) {
  std::vector<Case> c = {
      Case("3x3, pads 1, stride 2, bias, mask").Def(Op("DeformConv", {"X", "W", "O", "B", "M"}, {"Y"},
                                                        {Ints("pads", {1, 1, 1, 1}), Ints("strides", {2, 2}),
                                                         Arg("has_bias", 1), Arg("has_mask", 1)}))
          .Inputs({In({1, 2, 5, 6}), In({3, 2, 3, 3}), In({1, 18, 3, 3}).Range(-1.5, 1.5), In({3}), In({1, 9, 3, 3}).Range(0, 1)})
          .Ref(DeformConvRef),
      Case("group 2, offset_group 2, dilation 2").Def(Op("DeformConv", {"X", "W", "O"}, {"Y"},
                                                         {Arg("group", 2), Arg("offset_group", 2), Ints("dilations", {2, 2})}))
          .Inputs({In({2, 4, 5, 5}), In({2, 2, 2, 2}), In({2, 16, 3, 3}).Range(-2, 2)}).Ref(DeformConvRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(RoiAlign) {
  const auto roi = [](const std::string& ct, int64_t ratio) {
    return Op("RoiAlign", {"X", "R", "I"}, {"Y"},
              {Arg("coordinate_transformation_mode", ct), Arg("mode", "avg"), Arg("output_height", 3),
               Arg("output_width", 2), Arg("sampling_ratio", ratio), Arg("spatial_scale", 0.5f)});
  };
  const auto rois = In({3, 4}).Values({0, 0, 9, 7, 2.5, 1, 6, 11.5, -3, -2, 14, 3});
  const auto idx = In({3}, DataType::Int64).Values({1, 0, 1});
  std::vector<Case> c = {
      Case("half_pixel, adaptive sampling").Def(roi("half_pixel", 0)).Inputs({In({2, 2, 6, 5}), rois, idx}).Ref(RoiAlignAvgRef),
      Case("output_half_pixel, sampling 2").Def(roi("output_half_pixel", 2)).Inputs({In({2, 2, 6, 5}), rois, idx})
          .Ref(RoiAlignAvgRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(CenterCropPad) {
  std::vector<Case> c = {
      Case("crop one axis, pad another (odd differences)").Def(Op("CenterCropPad", {"X", "S"}, {"Y"}))
          .Inputs({In({7, 4, 2}), In({3}, DataType::Int64).Values({4, 7, 2})}).Ref(CenterCropPadRef),
      Case("axes -3, -1 of int32").Def(Op("CenterCropPad", {"X", "S"}, {"Y"}, {Ints("axes", {-3, -1})}))
          .Inputs({In({5, 3, 6}, DataType::Int32).Range(-9, 9), In({2}, DataType::Int32).Values({2, 9})})
          .Ref(CenterCropPadRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

TEST_CASE("GridSample refuses bad grids, modes and dtypes, naming op and blob", "[grid_sample]") {
  using optest::RunError;
  auto zeros = [](std::vector<int64_t> s, DataType t = DataType::Float) {
    Tensor x(s, t);
    std::memset(x.raw_mutable_data(t), 0, x.nbytes());
    return x;
  };
  const auto X = zeros({1, 2, 4, 4});
  CHECK_THAT(RunError(GS("linear", "zeros", 0), {X, zeros({1, 3, 3, 3})}), Catch::Contains("GridSample") && Catch::Contains("'G'"));
  CHECK_THAT(RunError(GS("linear", "zeros", 0), {X, zeros({2, 3, 3, 2})}), Catch::Contains("'G'"));
  CHECK_THAT(RunError(GS("linear", "zeros", 0), {zeros({4, 4}), zeros({4, 2})}), Catch::Contains("'X'"));
  CHECK_THAT(RunError(GS("area", "zeros", 0), {X, zeros({1, 3, 3, 2})}), Catch::Contains("area"));
  CHECK_THAT(RunError(GS("linear", "wrap", 0), {X, zeros({1, 3, 3, 2})}), Catch::Contains("wrap"));
  CHECK_THAT(RunError(GS("linear", "zeros", 0), {zeros({1, 2, 4, 4}, DataType::Int32), zeros({1, 3, 3, 2}, DataType::Int32)}),
             Catch::Contains("float32"));
  CHECK_THAT(RunError(GS("linear", "zeros", 0), {X, zeros({1, 3, 3, 2}, DataType::Double)}), Catch::Contains("one dtype"));
  Tensor far({1, 1, 1, 2}, DataType::Double);  // coordinates far beyond float's range: zeros, no overflow
  far.mutable_data<double>()[0] = 1e300, far.mutable_data<double>()[1] = -1e300;
  CHECK(RunError(GS("cubic", "reflection", 0), {zeros({1, 1, 3, 3}, DataType::Double), far}) == "");
  const auto size = [&](std::vector<int64_t> v) {
    Tensor t({static_cast<int64_t>(v.size())}, DataType::Int64);
    std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
    return t;
  };
  const auto affine = Op("AffineGrid", {"T", "S"}, {"G"});
  CHECK_THAT(RunError(affine, {zeros({2, 3, 4}), size({2, 1, 4, 4})}), Catch::Contains("AffineGrid") && Catch::Contains("'T'"));
  CHECK_THAT(RunError(affine, {zeros({2, 2, 3}), size({2, 1, 4})}), Catch::Contains("'S'"));
  CHECK_THAT(RunError(affine, {zeros({2, 2, 3}), size({2, 1, -4, 4})}), Catch::Contains("negative"));
  const auto deform = Op("DeformConv", {"X", "W", "O"}, {"Y"});
  CHECK_THAT(RunError(deform, {zeros({1, 2, 4, 4}), zeros({1, 3, 2, 2}), zeros({1, 8, 3, 3})}),
             Catch::Contains("DeformConv") && Catch::Contains("'W'"));
  CHECK_THAT(RunError(deform, {zeros({1, 2, 4, 4}), zeros({1, 2, 2, 2}), zeros({1, 8, 2, 2})}), Catch::Contains("'O'"));
  CHECK_THAT(RunError(deform, {zeros({1, 2, 4}), zeros({1, 2, 2}), zeros({1, 4, 3})}), Catch::Contains("2-D"));
  const auto roi = Op("RoiAlign", {"X", "R", "I"}, {"Y"});
  CHECK_THAT(RunError(roi, {zeros({1, 1, 4, 4}), zeros({2, 3}), size({0, 0})}), Catch::Contains("RoiAlign") &&
                                                                                  Catch::Contains("'R'"));
  CHECK_THAT(RunError(roi, {zeros({1, 1, 4, 4}), zeros({2, 4}), size({0, 1})}), Catch::Contains("holds 1"));
  CHECK_THAT(RunError(roi, {zeros({1, 1, 4, 4}), zeros({2, 4}), size({0})}), Catch::Contains("'I'"));
  Tensor huge({1, 4}, DataType::Float);
  std::fill_n(huge.mutable_data<float>(), 4, 1e30f);
  huge.mutable_data<float>()[0] = -1e30f, huge.mutable_data<float>()[1] = -1e30f;
  CHECK_THAT(RunError(roi, {zeros({1, 1, 4, 4}), huge, size({0})}), Catch::Contains("samples per bin"));
  const auto crop = Op("CenterCropPad", {"X", "S"}, {"Y"}, {Ints("axes", {0, 0})});
  CHECK_THAT(RunError(crop, {zeros({3, 3}), size({2, 2})}), Catch::Contains("CenterCropPad") && Catch::Contains("repeated"));
  CHECK_THAT(RunError(Op("CenterCropPad", {"X", "S"}, {"Y"}), {zeros({3, 3}), size({2})}), Catch::Contains("1 sizes for 2 axes"));
  CHECK_THAT(RunError(Op("CenterCropPad", {"X", "S"}, {"Y"}), {zeros({3, 3}), size({2, -1})}), Catch::Contains("size -1"));
}

}  // namespace harness
}  // namespace hetnet
