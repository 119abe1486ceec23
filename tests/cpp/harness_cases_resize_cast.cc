// Harness cases for ResizeInterp (ONNX Resize: linear / cubic / nearest), CastLike and BitShift.
// References are naive float64 loops written from the ONNX definitions, not from the kernels: Resize
// as the tensor product of per-axis kernel weights K(x_original - i) over all neighbour combinations
// at once (the kernel resizes one axis at a time), BitShift by multiplying and dividing by 2^y.
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

const DataType i8 = DataType::Int8, i32 = DataType::Int32, i64 = DataType::Int64, u8 = DataType::UInt8,
               u16 = DataType::UInt16, f64 = DataType::Double;

std::string StrArg(const caffe2::OperatorDef& def, const std::string& name, const std::string& dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return dflt;
}
double FloatArg(const caffe2::OperatorDef& def, const std::string& name, double dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.f();
  return dflt;
}

// One axis: the input positions and weights an output index reads (ONNX Resize, no antialias).
struct Taps {
  std::vector<int64_t> idx;
  std::vector<double> w;
};
Taps AxisTaps(const std::string& mode, const std::string& ctm, double a, int64_t in, int64_t out_i, double scale) {
  const double y = static_cast<double>(out_i), len = scale * static_cast<double>(in);
  double x = 0;
  if (ctm == "align_corners") x = len == 1 ? 0 : y * (in - 1) / (len - 1);
  else if (ctm == "asymmetric") x = y / scale;
  else if (ctm == "pytorch_half_pixel") x = len == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  else x = (y + 0.5) / scale - 0.5;  // half_pixel
  auto clamp = [in](int64_t i) { return i < 0 ? 0 : i >= in ? in - 1 : i; };
  Taps t;
  const int64_t f = static_cast<int64_t>(std::floor(x));
  if (mode == "nearest") {  // round_prefer_floor: ties (x.5) go down
    t.idx = {clamp(x - f > 0.5 ? f + 1 : f)};
    t.w = {1.0};
    return t;
  }
  auto kernel = [&mode, a](double d) {
    d = std::fabs(d);
    if (mode == "linear") return d < 1 ? 1 - d : 0.0;
    if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
    return d < 2 ? a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a : 0.0;
  };
  const int64_t lo = mode == "linear" ? f : f - 1, hi = mode == "linear" ? f + 1 : f + 2;
  for (int64_t i = lo; i <= hi; ++i) {
    t.idx.push_back(clamp(i));
    t.w.push_back(kernel(x - static_cast<double>(i)));
  }
  return t;
}

// Inputs: X, scales (scales_input = 1).
RefTensors ResizeRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const std::string mode = StrArg(def, "mode", "nearest"), ctm = StrArg(def, "coordinate_transformation_mode",
                                                                        "half_pixel");
  const double a = FloatArg(def, "cubic_coeff_a", -0.75);
  const size_t r = X.shape.size();
  std::vector<int64_t> out(r);
  for (size_t d = 0; d < r; ++d) out[d] = static_cast<int64_t>(std::floor(in[1][d] * X.shape[d]));
  RefTensor Y(out, X.dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    std::vector<Taps> taps(r);
    int64_t rest = k;
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      taps[d] = AxisTaps(mode, ctm, a, X.shape[d], rest % out[d], in[1][d]);
      rest /= out[d];
    }
    // Every combination of taps (an odometer over the axes).
    std::vector<size_t> pick(r, 0);
    double sum = 0;
    while (true) {
      double w = 1;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        w *= taps[d].w[pick[d]];
        off = off * X.shape[d] + taps[d].idx[pick[d]];
      }
      sum += w * X[off];
      size_t d = r;
      while (d > 0 && ++pick[d - 1] == taps[d - 1].idx.size()) pick[--d] = 0;
      if (d == 0) break;
    }
    Y[k] = sum;
  }
  return {Y};
}

caffe2::OperatorDef Resize(const std::string& mode, const std::string& ctm) {
  return Op("ResizeInterp", {"X", "S"}, {"Y"},
            {Arg("mode", mode), Arg("coordinate_transformation_mode", ctm), Arg("scales_input", 1)});
}

RefTensors CastLikeRef(const caffe2::OperatorDef&, const RefTensors& in) {
  RefTensor y(in[0].shape, in[1].dtype);
  const bool integer = in[1].dtype != DataType::Float && in[1].dtype != f64;
  for (int64_t i = 0; i < y.numel(); ++i) y[i] = integer ? std::trunc(in[0][i]) : in[0][i];
  return {y};
}

int Bits(DataType t) { return t == i8 || t == u8 ? 8 : t == u16 ? 16 : t == i32 ? 32 : 64; }
bool Signed(DataType t) { return t != u8 && t != u16; }

// Same shapes. Left: x * 2^y wrapped to the width (two's complement); right: floor(x / 2^y).
template <bool kLeft>
RefTensors BitShiftRef(const caffe2::OperatorDef&, const RefTensors& in) {
  RefTensor z(in[0].shape, in[0].dtype);
  const int bits = Bits(in[0].dtype);
  const double mod = std::ldexp(1.0, bits);
  for (int64_t i = 0; i < z.numel(); ++i) {
    const double x = in[0][i], y = in[1][i];
    if (y < 0 || y >= bits) {
      z[i] = !kLeft && x < 0 ? -1 : 0;
    } else if (kLeft) {
      double v = std::fmod(x * std::ldexp(1.0, static_cast<int>(y)), mod);
      if (v < 0) v += mod;
      z[i] = Signed(in[0].dtype) && v >= mod / 2 ? v - mod : v;
    } else {
      z[i] = std::floor(x / std::ldexp(1.0, static_cast<int>(y)));
    }
  }
  return {z};
}

}  // namespace

HN_OP_CASES(ResizeInterp) {
  std::vector<Case> c;
  const InputSpec up = In({4}).Values({1, 1, 1.5, 2.5}), down = In({4}).Values({1, 1, 0.6, 0.75});
  for (const char* mode : {"linear", "cubic", "nearest"})
    for (const char* ctm : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"})
      for (const InputSpec* s : {&up, &down})
        c.push_back(Case(std::string(mode) + " " + ctm + (s == &up ? " up" : " down"))
                        .Def(Resize(mode, ctm))
                        .Inputs({In({2, 2, 4, 4}), *s}));
  c.push_back(Case("linear 3-d, double").Def(Resize("linear", "half_pixel"))
                  .Inputs({In({2, 3, 5}, f64), In({3}).Values({1, 2, 0.4})}));
  for (auto& k : c) k.Ref(ResizeRef).NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(CastLike) {
  std::vector<Case> c = {
      Case("float like int32").Def(Op("CastLike", {"X", "L"}, {"Y"})).Inputs({In({3, 4}).Range(-50, 50), In({1}, i32)}),
      Case("int64 like double").Def(Op("CastLike", {"X", "L"}, {"Y"}))
          .Inputs({In({5}, i64).Range(-1000, 1000), In({2}, f64)}),
      Case("float like int8 (in range)").Def(Op("CastLike", {"X", "L"}, {"Y"}))
          .Inputs({In({2, 3}).Range(-100, 100), In({}, i8)}),
  };
  for (auto& k : c) k.Ref(CastLikeRef).NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(BitShift) {
  std::vector<Case> c;
  for (DataType t : {u8, u16, i8, i32, i64}) {
    const int bits = Bits(t);
    const double lo = Signed(t) ? -100 : 0, hi = t == u8 ? 255 : t == i8 ? 100 : 1000;
    for (bool left : {true, false}) {
      Case k(std::string(left ? "left " : "right ") + DataTypeName(t));
      k.Def(Op("BitShift", {"X", "Y"}, {"Z"}, {Arg("direction", left ? "LEFT" : "RIGHT")}))
          .Inputs({In({12}, t).Range(lo, hi), In({12}, t).Range(Signed(t) ? -2 : 0, bits + 2)})
          .Ref(left ? BitShiftRef<true> : BitShiftRef<false>)
          .NoGrad()
          .CpuOnly();
      c.push_back(k);
    }
  }
  return c;
}

}  // namespace harness
}  // namespace hetnet
