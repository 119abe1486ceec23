#include "operators/tile_op.h"

#include <cstring>

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

namespace {
// A one-element int32/int64 input, copied to the host.
int64_t ScalarInput(const caffe2::OperatorDef& def, const Tensor& t, int i, DeviceContext* ctx) {
  HN_ENFORCE(t.numel() == 1 && (t.dtype() == DataType::Int32 || t.dtype() == DataType::Int64), def.type(),
             ": input ", i, " ('", def.input(i), "') must hold one int32 or int64 value, got ",
             DataTypeName(t.dtype()), " ", t.ShapeString());
  int64_t v = 0;
  if (t.dtype() == DataType::Int64) {
    ctx->CopyBytes(sizeof(v), t.data<int64_t>(), t.device(), &v, Device::CPU());
  } else {
    int32_t w = 0;
    ctx->CopyBytes(sizeof(w), t.data<int32_t>(), t.device(), &w, Device::CPU());
    v = w;
  }
  ctx->FinishDeviceComputation();
  return v;
}
}  // namespace

TileParams ReadTileParams(OperatorBase* op, const caffe2::OperatorDef& def, int ndim, DeviceContext* ctx) {
  int64_t tiles = op->GetSingleArgument<int64_t>("tiles", 1);
  int64_t axis = op->GetSingleArgument<int64_t>("axis", 0);
  if (op->InputSize() > 1) tiles = ScalarInput(def, op->InputTensor(1), 1, ctx);
  if (op->InputSize() > 2) axis = ScalarInput(def, op->InputTensor(2), 2, ctx);
  HN_ENFORCE(tiles >= 1 && tiles <= (int64_t{1} << 31), def.type(), ": tiles must be in [1, 2^31], got ", tiles);
  HN_ENFORCE(ndim >= 1, def.type(), ": input 0 ('", def.input(0), "') must have at least 1 dim");
  return TileParams{tiles, CanonicalAxisFor(def, static_cast<int>(axis), ndim, 0)};
}

TileGeom MakeTileGeom(const std::vector<int64_t>& x, TileParams p) {
  TileGeom g;
  g.outer = ProdDims(x, 0, p.axis);
  g.inner = ProdDims(x, p.axis, x.size());
  g.tiles = p.tiles;
  return g;
}

template <>
void TileForward<CPUContext>(TileGeom g, size_t itemsize, const void* x, void* y, CPUContext*) {
  const size_t row = static_cast<size_t>(g.inner) * itemsize;
  const char* src = static_cast<const char*>(x);
  char* dst = static_cast<char*>(y);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t t = 0; t < g.tiles; ++t) std::memcpy(dst + (o * g.tiles + t) * row, src + o * row, row);
}

template <>
void TileBackward<CPUContext>(TileGeom g, const float* dy, float* dx, CPUContext*) {
  for (int64_t o = 0; o < g.outer; ++o) {
    float* d = dx + o * g.inner;
    std::fill(d, d + g.inner, 0.f);
    for (int64_t t = 0; t < g.tiles; ++t) {
      const float* s = dy + (o * g.tiles + t) * g.inner;
      for (int64_t q = 0; q < g.inner; ++q) d[q] += s[q];
    }
  }
}

OPERATOR_SCHEMA(Tile)
    .NumInputs(1, 3)
    .NumOutputs(1)
    .InputsOnCPU({1, 2})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known || in.size() > 1 || in[0].dims.empty()) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      ArgumentHelper a(def);
      const int axis = CanonicalAxisFor(def, a.GetSingleArgument<int>("axis", 0), in[0].dims.size(), 0);
      auto d = in[0].dims;
      d[axis] *= a.GetSingleArgument<int64_t>("tiles", 1);
      return std::vector<TensorInfo>{TensorInfo::Of(d, in[0].dtype)};
    })
    .SetDoc("Tile(X, [tiles, [axis]]) -> Y: `tiles` copies of X along `axis` (args tiles=1, axis=0, or one-element "
            "int inputs 1 and 2). Gradient: TileGradient(dY, [tiles, [axis]]) sums the copies.");
OPERATOR_SCHEMA(TileGradient).NumInputs(1, 3).NumOutputs(1).InputsOnCPU({1, 2});
REGISTER_CPU_OPERATOR(Tile, TileOp<CPUContext>);
REGISTER_CPU_OPERATOR(TileGradient, TileGradientOp<CPUContext>);

namespace {
class GetTileGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> ins{GO(0)};
    for (int i = 1; i < Def().input_size(); ++i) ins.push_back(I(i));
    auto op = GradientOp("TileGradient", ins, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(Tile, GetTileGradient);

}  // namespace hetnet
