// Tile(X, [tiles, [axis]]) -> Y, Caffe2's: `tiles` copies of X one after another along `axis`
// (args tiles, default 1, and axis, default 0, negative counts from the end; or one-element int32/int64
// inputs 1 and 2, read on the host, which take precedence as in Caffe2). Y.dims[axis] = X.dims[axis] * tiles.
// TileGradient(dY, [tiles, [axis]]) -> dX: the copies summed.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// X as [outer, inner] (inner = dims[axis:]); Y as [outer, tiles, inner].
struct TileGeom {
  int64_t outer = 1, inner = 1, tiles = 1;
};

template <class Context>
void TileForward(TileGeom g, size_t itemsize, const void* x, void* y, Context* ctx);
template <class Context>
void TileBackward(TileGeom g, const float* dy, float* dx, Context* ctx);

// tiles and canonical axis from args or inputs 1/2; `shape` is X's (forward) or dY's (gradient).
struct TileParams {
  int64_t tiles;
  int axis;
};
TileParams ReadTileParams(OperatorBase* op, const caffe2::OperatorDef& def, int ndim, DeviceContext* ctx);
TileGeom MakeTileGeom(const std::vector<int64_t>& x, TileParams p);

template <class Context>
class TileOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    HN_CHECK_KIND(kUnsupported, X.dtype() != DataType::String, "Tile: input 0 ('", this->def().input(0),
                  "') is a string tensor; fixed-size dtypes only");
    const TileParams p = ReadTileParams(this, this->def(), X.ndim(), &this->context_);
    std::vector<int64_t> out = X.shape();
    out[p.axis] *= p.tiles;
    Tensor* Y = this->Output(0, out, X.dtype());
    TileForward<Context>(MakeTileGeom(X.shape(), p), X.itemsize(), X.raw_data(), Y->raw_mutable_data(X.dtype()),
                         &this->context_);
  }
};

template <class Context>
class TileGradientOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& dY = this->Input(0);
    EnforceFloatInput(this->def(), dY, 0);
    const TileParams p = ReadTileParams(this, this->def(), dY.ndim(), &this->context_);
    std::vector<int64_t> xs = dY.shape();
    HN_ENFORCE(xs[p.axis] % p.tiles == 0, "TileGradient: dim ", p.axis, " of input 0 ('", this->def().input(0),
               "') is ", xs[p.axis], ", not a multiple of tiles ", p.tiles);
    xs[p.axis] /= p.tiles;
    Tensor* dX = this->Output(0, xs, DataType::Float);
    TileBackward<Context>(MakeTileGeom(xs, p), dY.template data<float>(), dX->template mutable_data<float>(),
                          &this->context_);
  }
};

}  // namespace hetnet
