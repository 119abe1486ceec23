// NHWC2NCHW / NCHW2NHWC: move the channel dim between last and 1 ([N, d1..dk, C] <-> [N, C, d1..dk]),
// for inputs of 3 to kMaxDims dims and any non-string dtype. Each op's gradient is the other one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/operator.h"
#include "core/reduced_precision.h"
#include "operators/transpose_op.h"

namespace hetnet {

// Reduced-precision inference (core/reduced_precision.h): the switches move elements of any dtype,
// so they follow narrow runs on every device that registers them.
inline ReducedPrecisionKernel NarrowOrderSwitchKernel() {
  return {{DataType::BFloat16, DataType::Float16}, 1, /*follower=*/true, nullptr, -1};
}

// The Transpose axes of the switch: to NCHW [0, n-1, 1, .., n-2]; to NHWC [0, 2, .., n-1, 1].
inline std::vector<int> OrderSwitchAxes(int ndim, bool to_nchw) {
  std::vector<int> axes{0};
  if (to_nchw) axes.push_back(ndim - 1);
  for (int i = to_nchw ? 1 : 2; i < (to_nchw ? ndim - 1 : ndim); ++i) axes.push_back(i);
  if (!to_nchw) axes.push_back(1);
  return axes;
}

// Where each element of the switched tensor comes from in x (of shape x_shape): the strided read
// of the Transpose kernels. *y_shape: the switched shape.
inline StridedIndex OrderSwitchSource(const caffe2::OperatorDef& def, const std::vector<int64_t>& x_shape, bool to_nchw,
                                      std::vector<int64_t>* y_shape) {
  const std::vector<int> axes = OrderSwitchAxes(static_cast<int>(x_shape.size()), to_nchw);
  const std::vector<int64_t> xst = RowMajorStrides(x_shape);
  std::vector<int64_t> st;
  for (int a : axes) st.push_back(xst[a]);
  *y_shape = TransposeShape(x_shape, axes);
  return MakeStridedIndex(def, *y_shape, st);
}

inline void CheckOrderSwitchRank(const caffe2::OperatorDef& def, const std::vector<int64_t>& dims) {
  HN_ENFORCE(dims.size() >= 3, def.type(), ": input 0 ('", def.input(0), "') must have at least 3 dims, has shape ",
             ShapeToString(dims));
}

// dst[c][r] = src[r][c] for a rows x cols matrix of `item`-byte elements, in 32 x 32 tiles so that
// both sides stay in cache (the per-element strided copy took 2.2 ms for a 3 x 224 x 224 image).
template <class T>
void TransposeTiles(int64_t rows, int64_t cols, const T* src, T* dst) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
    }
}

// TransposeTiles on elements of `item` bytes (2: bfloat16 / float16, 4, 8), given as bytes.
inline void TransposeTilesOfItems(int64_t rows, int64_t cols, size_t item, const char* src, char* dst) {
  if (item == 2)
    TransposeTiles(rows, cols, reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst));
  else if (item == 4)
    TransposeTiles(rows, cols, reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst));
  else
    TransposeTiles(rows, cols, reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst));
}

template <class Context, bool kToNCHW>
class OrderSwitchOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    CheckOrderSwitchRank(this->def(), X.shape());
    const size_t item = PlainItemSize(this->def(), X, 0);
    if constexpr (std::is_same<Context, CPUContext>::value) {
      if (item == 2 || item == 4 || item == 8) return SwitchByTiles(X, item);  // 2: bfloat16 / float16
    }
    std::vector<int64_t> y_shape;
    const StridedIndex src = OrderSwitchSource(this->def(), X.shape(), kToNCHW, &y_shape);
    Tensor* Y = this->Output(0, y_shape, X.dtype());
    TransposeKernel<Context>(src, X.numel(), item, X.raw_data(), Y->raw_mutable_data(X.dtype()), &this->context_);
  }

 private:
  // Per image, a [C, S] <-> [S, C] matrix transpose (S: the spatial dims' product).
  void SwitchByTiles(const Tensor& X, size_t item) {
    const std::vector<int64_t> y_shape = TransposeShape(X.shape(), OrderSwitchAxes(X.ndim(), kToNCHW));
    Tensor* Y = this->Output(0, y_shape, X.dtype());
    const int64_t n = X.dim(0), c = kToNCHW ? X.dim(X.ndim() - 1) : X.dim(1);
    const int64_t s = n == 0 || c == 0 ? 0 : X.numel() / (n * c), rows = kToNCHW ? s : c, cols = kToNCHW ? c : s;
    const char* src = static_cast<const char*>(X.raw_data());
    char* dst = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
    for (int64_t i = 0; i < n; ++i) {
      const size_t offset = static_cast<size_t>(i * rows * cols) * item;
      TransposeTilesOfItems(rows, cols, item, src + offset, dst + offset);
    }
  }
};

}  // namespace hetnet
