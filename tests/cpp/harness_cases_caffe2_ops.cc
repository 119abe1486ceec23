// Harness cases for the Caffe2 operators of issue 13: the LENGTHS reducers (SparseLengthsSum,
// SparseLengthsWeightedSum, SparseLengthsMean, LengthsSum, LengthsMean), LayerNorm, SquaredL2Distance,
// Tile, PadImage, ResizeNearest (MSRAFill, being random, is tested in test_ops_caffe2_more.cc).
// References are naive float64 loops written from Caffe2's operator docs, not from the kernels.
#include <algorithm>
#include <cmath>
#include <string>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

const DataType i32 = DataType::Int32, i64 = DataType::Int64;

// Segment reducer reference; inputs DATA, [WEIGHTS], [INDICES], LENGTHS as the op's kind says.
RefFn SegmentRef(bool sparse, bool weighted, bool mean) {
  return [=](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor& D = in[0];
    const RefTensor* W = weighted ? &in[1] : nullptr;
    const RefTensor* I = sparse ? &in[weighted ? 2 : 1] : nullptr;
    const RefTensor& L = in.back();
    const int64_t inner = D.numel() / D.shape[0];
    std::vector<int64_t> shape = D.shape;
    shape[0] = L.numel();
    RefTensor y(shape);
    int64_t j = 0;
    for (int64_t s = 0; s < L.numel(); ++s) {
      const int64_t len = static_cast<int64_t>(L[s]);
      for (int64_t t = 0; t < len; ++t, ++j) {
        const int64_t row = I ? static_cast<int64_t>((*I)[j]) : j;
        const double w = (W ? (*W)[j] : 1.0) / (mean ? len : 1);
        for (int64_t q = 0; q < inner; ++q) y[s * inner + q] += w * D[row * inner + q];
      }
    }
    return RefTensors{y};
  };
}

std::vector<Case> LengthsReducerCases() {
  const std::vector<double> lengths{2, 0, 3, 1};  // an empty segment in the middle
  const std::vector<double> idx{4, 0, 4, 2, 1, 3};  // a repeated index (4)
  return {
      Case("SLS int32 indices")
          .Def(Op("SparseLengthsSum", {"D", "I", "L"}, {"Y"}))
          .Inputs({In({5, 3}), In({6}, i32).Values(idx), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(true, false, false)),
      Case("SLS int64 indices, 3-D data")
          .Def(Op("SparseLengthsSum", {"D", "I", "L"}, {"Y"}))
          .Inputs({In({5, 2, 2}), In({6}, i64).Values(idx), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(true, false, false)),
      Case("SLWS")
          .Def(Op("SparseLengthsWeightedSum", {"D", "W", "I", "L"}, {"Y"}))
          .Inputs({In({5, 3}), In({6}).NoGrad(), In({6}, i64).Values(idx), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(true, true, false)),
      Case("SLWS grad_on_weights")
          .Def(Op("SparseLengthsWeightedSum", {"D", "W", "I", "L"}, {"Y"}, {Arg("grad_on_weights", 1)}))
          .Inputs({In({5, 3}), In({6}), In({6}, i32).Values(idx), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(true, true, false)),
      Case("SLMean")
          .Def(Op("SparseLengthsMean", {"D", "I", "L"}, {"Y"}))
          .Inputs({In({5, 3}), In({6}, i32).Values(idx), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(true, false, true)),
      Case("LengthsSum")
          .Def(Op("LengthsSum", {"D", "L"}, {"Y"}))
          .Inputs({In({6, 3}), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(false, false, false)),
      Case("LengthsMean")
          .Def(Op("LengthsMean", {"D", "L"}, {"Y"}))
          .Inputs({In({6, 2}), In({4}, i32).Values(lengths)})
          .Ref(SegmentRef(false, false, true)),
  };
}


int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
double FloatArg(const caffe2::OperatorDef& def, const std::string& name, double dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.f();
  return dflt;
}

// LayerNorm: rows of prod(dims[:axis]), normalized with the biased variance + epsilon.
RefTensors LayerNormRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  int64_t axis = IntArg(def, "axis", 1);
  if (axis < 0) axis += X.shape.size();
  const double eps = FloatArg(def, "epsilon", 1e-5);
  int64_t m = 1;
  for (int64_t d = 0; d < axis; ++d) m *= X.shape[d];
  const int64_t n = X.numel() / m;
  std::vector<int64_t> ms(X.shape.begin(), X.shape.begin() + axis);
  ms.push_back(1);
  RefTensor y(X.shape), mean(ms), sd(ms);
  for (int64_t i = 0; i < m; ++i) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += X[i * n + j] / n;
    for (int64_t j = 0; j < n; ++j) var += (X[i * n + j] - mu) * (X[i * n + j] - mu) / n;
    mean[i] = mu;
    sd[i] = std::sqrt(var + eps);
    for (int64_t j = 0; j < n; ++j) {
      const double v = (X[i * n + j] - mu) / sd[i];
      y[i * n + j] = in.size() == 3 ? v * in[1][j] + in[2][j] : v;
    }
  }
  return {y, mean, sd};
}

std::vector<Case> LayerNormCases() {
  return {
      Case("default axis 1").Def(Op("LayerNorm", {"X"}, {"Y", "mean", "std"})).Inputs({In({3, 5})}).Ref(LayerNormRef),
      Case("axis 2 of 3-D, epsilon 1e-3")
          .Def(Op("LayerNorm", {"X"}, {"Y", "mean", "std"}, {Arg("axis", 2), Arg("epsilon", 1e-3)}))
          .Inputs({In({2, 3, 4})})
          .Ref(LayerNormRef),
      Case("axis -2, elementwise_affine")
          .Def(Op("LayerNorm", {"X", "gamma", "beta"}, {"Y", "mean", "std"}, {Arg("axis", -2),
                                                                              Arg("elementwise_affine", 1)}))
          .Inputs({In({2, 3, 4}), In({3, 4}), In({3, 4})})
          .Ref(LayerNormRef),
  };
}

RefTensors SquaredL2Ref(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t n = in[0].shape.empty() ? 1 : in[0].shape[0], d = n ? in[0].numel() / n : 0;
  RefTensor z({n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) z[i] += 0.5 * std::pow(in[0][i * d + j] - in[1][i * d + j], 2);
  return {z};
}

// Tile: output index -> input index with the axis coordinate taken modulo X's dim.
RefTensors TileRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  int64_t tiles = in.size() > 1 ? static_cast<int64_t>(in[1][0]) : IntArg(def, "tiles", 1);
  int64_t axis = in.size() > 2 ? static_cast<int64_t>(in[2][0]) : IntArg(def, "axis", 0);
  if (axis < 0) axis += X.shape.size();
  std::vector<int64_t> shape = X.shape;
  shape[axis] *= tiles;
  RefTensor y(shape, X.dtype);
  for (int64_t k = 0; k < y.numel(); ++k) {
    int64_t rem = k, off = 0, stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (d == axis) c %= X.shape[d];
      off += c * stride;
      stride *= X.shape[d];
    }
    y[k] = X[off];
  }
  return {y};
}

std::vector<Case> SquaredL2AndTileCases() {
  return {
      Case("SquaredL2Distance 2-D").Def(Op("SquaredL2Distance", {"X", "Y"}, {"Z"})).Inputs({In({4, 3}), In({4, 3})})
          .Ref(SquaredL2Ref),
      Case("SquaredL2Distance 3-D").Def(Op("SquaredL2Distance", {"X", "Y"}, {"Z"})).Inputs({In({2, 3, 2}),
                                                                                           In({2, 3, 2})})
          .Ref(SquaredL2Ref),
      Case("Tile tiles 3 axis 1").Def(Op("Tile", {"X"}, {"Y"}, {Arg("tiles", 3), Arg("axis", 1)}))
          .Inputs({In({2, 3, 2})}).Ref(TileRef),
      Case("Tile default axis 0").Def(Op("Tile", {"X"}, {"Y"}, {Arg("tiles", 2)})).Inputs({In({3, 2})}).Ref(TileRef),
      Case("Tile axis -1 int32").Def(Op("Tile", {"X"}, {"Y"}, {Arg("tiles", 2), Arg("axis", -1)}))
          .Inputs({In({2, 3}, i32).Range(-9, 9)}).Ref(TileRef),
      Case("Tile tiles and axis as inputs").Def(Op("Tile", {"X", "tiles", "axis"}, {"Y"}))
          .Inputs({In({2, 3}), In({1}, i64).Values({4}), In({1}, i32).Values({1})})
          .Ref(TileRef)
          .NoShapeCheck(),
  };
}

std::string StrArg(const caffe2::OperatorDef& def, const std::string& name, const std::string& dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return dflt;
}

// PadImage from numpy.pad's definitions (constant / reflect / edge), pads [t, l, b, r].
RefFn PadImageRef(std::vector<int64_t> pads) {
  return [pads](const caffe2::OperatorDef& def, const RefTensors& in) {
    const RefTensor& X = in[0];
    const std::string mode = StrArg(def, "mode", "constant");
    const double value = FloatArg(def, "value", 0.0);
    const int64_t H = X.shape[2], W = X.shape[3], OH = H + pads[0] + pads[2], OW = W + pads[1] + pads[3];
    RefTensor y({X.shape[0], X.shape[1], OH, OW});
    auto src = [&](int64_t o, int64_t pad, int64_t n) -> int64_t {
      int64_t i = o - pad;
      if (i >= 0 && i < n) return i;
      if (mode == "constant") return -1;
      if (mode == "edge") return std::min<int64_t>(std::max<int64_t>(i, 0), n - 1);
      return i < 0 ? -i : 2 * (n - 1) - i;  // reflect about the edge pixel
    };
    for (int64_t c = 0; c < X.shape[0] * X.shape[1]; ++c)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t sy = src(oy, pads[0], H), sx = src(ox, pads[1], W);
          y[(c * OH + oy) * OW + ox] = sy < 0 || sx < 0 ? value : X[(c * H + sy) * W + sx];
        }
    return RefTensors{y};
  };
}

RefTensors ResizeNearestRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  double hs = FloatArg(def, "height_scale", 1.0), ws = FloatArg(def, "width_scale", 1.0);
  if (in.size() > 1) { hs = in[1][0]; ws = in[1][1]; }
  const int64_t H = X.shape[2], W = X.shape[3];
  const int64_t OH = static_cast<int64_t>(H * hs), OW = static_cast<int64_t>(W * ws);
  RefTensor y({X.shape[0], X.shape[1], OH, OW});
  for (int64_t c = 0; c < X.shape[0] * X.shape[1]; ++c)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t sy = std::min<int64_t>(static_cast<int64_t>(std::floor(oy / hs)), H - 1);
        const int64_t sx = std::min<int64_t>(static_cast<int64_t>(std::floor(ox / ws)), W - 1);
        y[(c * OH + oy) * OW + ox] = X[(c * H + sy) * W + sx];
      }
  return {y};
}

std::vector<Case> PadResizeCases() {
  return {
      Case("PadImage constant pad 1 value 0.5")
          .Def(Op("PadImage", {"X"}, {"Y"}, {Arg("pad", 1), Arg("value", 0.5)}))
          .Inputs({In({2, 2, 3, 4})}).Ref(PadImageRef({1, 1, 1, 1})),
      Case("PadImage reflect pads [2,1,0,2]")
          .Def(Op("PadImage", {"X"}, {"Y"}, {Ints("pads", {2, 1, 0, 2}), Arg("mode", "reflect")}))
          .Inputs({In({1, 2, 3, 4})}).Ref(PadImageRef({2, 1, 0, 2})),
      Case("PadImage edge pad_t/l/b/r")
          .Def(Op("PadImage", {"X"}, {"Y"}, {Arg("pad_t", 0), Arg("pad_l", 2), Arg("pad_b", 3), Arg("pad_r", 1),
                                              Arg("mode", "edge")}))
          .Inputs({In({2, 1, 2, 3})}).Ref(PadImageRef({0, 2, 3, 1})),
      Case("ResizeNearest x2")
          .Def(Op("ResizeNearest", {"X"}, {"Y"}, {Arg("height_scale", 2.0), Arg("width_scale", 2.0)}))
          .Inputs({In({1, 2, 3, 2})}).Ref(ResizeNearestRef),
      Case("ResizeNearest 1.5 x 0.5")
          .Def(Op("ResizeNearest", {"X"}, {"Y"}, {Arg("height_scale", 1.5), Arg("width_scale", 0.5)}))
          .Inputs({In({2, 1, 4, 6})}).Ref(ResizeNearestRef),
      Case("ResizeNearest scales input [3, 2]")
          .Def(Op("ResizeNearest", {"X", "scales"}, {"Y"}))
          .Inputs({In({1, 2, 2, 3}), In({2}).Values({3.0, 2.0}).NoGrad()})
          .Ref(ResizeNearestRef)
          .NoShapeCheck(),
  };
}

}  // namespace

HN_OP_CASES(Caffe2LengthsReducers) { return LengthsReducerCases(); }

}  // namespace harness
}  // namespace hetnet

namespace hetnet {
namespace harness {
HN_OP_CASES(Caffe2LayerNorm) { return LayerNormCases(); }
}  // namespace harness
}  // namespace hetnet

namespace hetnet {
namespace harness {
HN_OP_CASES(Caffe2SquaredL2AndTile) { return SquaredL2AndTileCases(); }
}  // namespace harness
}  // namespace hetnet

namespace hetnet {
namespace harness {
HN_OP_CASES(Caffe2PadImageResizeNearest) { return PadResizeCases(); }
}  // namespace harness
}  // namespace hetnet
