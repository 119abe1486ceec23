// Numpy-style (multidirectional) broadcasting: the plan that maps an output element to each
// input's element, computed once per run on the host and passed by value to the CPU loops and the
// CUDA kernels, which share the per-element index math below (HN_BROADCAST_HD).
//
// Shapes are right-aligned; a dim of 1 (or a missing leading dim) stretches to the other size.
// The plan drops output dims of size 1 and merges neighbouring dims that every input treats alike
// (all stretched or all walked), so [2,3,4]+[4] is two dims and same-rank cases stay small.
#pragma once

#include <cstdint>
#include <type_traits>
#include <string>
#include <vector>

#include "device/divide.h"
#include "device/math.h"

#if defined(__CUDACC__)
#define HN_BROADCAST_HD __host__ __device__
#else
#define HN_BROADCAST_HD
#endif

namespace hetnet::math {

constexpr int kMaxBroadcastDims = 8;    // after merging; more is refused with a clear error
constexpr int kMaxBroadcastInputs = 3;  // Where(C, X, Y)

struct BroadcastIndex {
  int ndim = 0;
  int num_inputs = 0;
  int64_t dims[kMaxBroadcastDims] = {};                         // output dims, outermost first
  int64_t strides[kMaxBroadcastInputs][kMaxBroadcastDims] = {};  // element strides, 0 where stretched
};

// The output shape of numpy broadcasting `shapes`; false when two dims differ and neither is 1.
bool NumpyBroadcastShape(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out);
// "A [2, 3] and B [4]"-style text for errors: the names with their shapes.
std::string DescribeShapes(const std::vector<std::string>& names, const std::vector<std::vector<int64_t>>& shapes);
// The plan for inputs that broadcast to `out` (checked by the caller with NumpyBroadcastShape).
BroadcastIndex MakeBroadcastIndex(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& inputs);

// off[k] = the element of input k that output element i reads.
HN_BROADCAST_HD inline void BroadcastOffsets(const BroadcastIndex& ix, int64_t i, int64_t* off) {
  for (int k = 0; k < ix.num_inputs; ++k) off[k] = 0;
  for (int d = ix.ndim - 1; d >= 0; --d) {
    const int64_t q = i / ix.dims[d], r = i - q * ix.dims[d];
    i = q;
    for (int k = 0; k < ix.num_inputs; ++k) off[k] += r * ix.strides[k][d];
  }
}

// Host loops: f(base, off, inner, step) for each row of the innermost merged dim, where output
// elements [base, base + inner) read input k at off[k] + q * step[k] (step is 0 or 1).
template <typename F>
inline void ForEachBroadcastRow(const BroadcastIndex& ix, int64_t total, F&& f) {
  if (total == 0) return;
  int64_t off[kMaxBroadcastInputs] = {}, step[kMaxBroadcastInputs] = {};
  if (ix.ndim == 0) return f(int64_t{0}, off, int64_t{1}, step);
  BroadcastIndex outer = ix;
  outer.ndim = ix.ndim - 1;
  const int64_t inner = ix.dims[ix.ndim - 1];
  for (int k = 0; k < ix.num_inputs; ++k) step[k] = ix.strides[k][ix.ndim - 1];
  for (int64_t o = 0, rows = total / inner; o < rows; ++o) {
    BroadcastOffsets(outer, o, off);
    f(o * inner, off, inner, step);
  }
}

// Integers wrap as NumPy's do: +, - and * run in an unsigned type at least as wide as unsigned int
// (signed overflow, and unsigned short promoted to int, are undefined behaviour in C++).
template <BinaryOp Op, typename T>
HN_BROADCAST_HD inline T ApplyBinary(T x, T y) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value && Op != BinaryOp::Div) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    const W a = static_cast<W>(static_cast<U>(x)), b = static_cast<W>(static_cast<U>(y));
    if constexpr (Op == BinaryOp::Add) return static_cast<T>(static_cast<U>(a + b));
    else if constexpr (Op == BinaryOp::Sub) return static_cast<T>(static_cast<U>(a - b));
    else return static_cast<T>(static_cast<U>(a * b));
  } else {
    if constexpr (Op == BinaryOp::Add) return x + y;
    else if constexpr (Op == BinaryOp::Sub) return x - y;
    else if constexpr (Op == BinaryOp::Mul) return x * y;
    else return Divide(x, y);
  }
}

// The reverse of a broadcast, for gradients: y (an input's shape) = x (the output's shape) summed
// over the dims the input stretched. y element j sums x over `reduced` dims at base(j).
struct ReduceToShapeIndex {
  int kept_ndim = 0, reduced_ndim = 0;
  int64_t kept_dims[kMaxBroadcastDims] = {}, kept_strides[kMaxBroadcastDims] = {};  // strides in x
  int64_t reduced_dims[kMaxBroadcastDims] = {}, reduced_strides[kMaxBroadcastDims] = {};
  int64_t reduced_count = 1;
  BroadcastIndex to_input;  // out -> in, for the CPU's row-wise accumulation
};
ReduceToShapeIndex MakeReduceToShapeIndex(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

// The offset of row-major index i over dims[0, ndim) in a layout with these strides.
HN_BROADCAST_HD inline int64_t StridedOffset(int64_t i, int ndim, const int64_t* dims, const int64_t* strides) {
  int64_t off = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    const int64_t q = i / dims[d];
    off += (i - q * dims[d]) * strides[d];
    i = q;
  }
  return off;
}
// The x offset where y element j's sum starts, and the offset of its t-th term from there.
HN_BROADCAST_HD inline int64_t ReducedBase(const ReduceToShapeIndex& r, int64_t j) {
  return StridedOffset(j, r.kept_ndim, r.kept_dims, r.kept_strides);
}
HN_BROADCAST_HD inline int64_t ReducedTerm(const ReduceToShapeIndex& r, int64_t t) {
  return StridedOffset(t, r.reduced_ndim, r.reduced_dims, r.reduced_strides);
}
HN_BROADCAST_HD inline float ReducedSum(const ReduceToShapeIndex& r, const float* x, int64_t j) {
  const int64_t base = ReducedBase(r, j);
  float s = 0.f;
  for (int64_t t = 0; t < r.reduced_count; ++t) s += x[base + ReducedTerm(r, t)];
  return s;
}

// c[i] = a[off_a(i)] op b[off_b(i)] for i < total (ix has two inputs). c must not alias a or b
// unless that input has the output's shape. Instantiated for HN_FOR_EACH_BINARY_MATH_TYPE.
template <typename T, class Context>
void NumpyBroadcastBinary(BinaryOp op, const BroadcastIndex& ix, int64_t total, const T* a, const T* b, T* c,
                          Context* ctx);
// y[j] = ReducedSum(r, x, j) for j < y_numel.
template <class Context>
void ReduceSumToShape(const ReduceToShapeIndex& r, int64_t y_numel, const float* x, float* y, Context* ctx);
// y[i] = x[off(i)] for i < total (ix has one input; a broadcast, or any strided view such as a
// slice), elements of `itemsize` bytes (1, 2, 4 or 8).
template <class Context>
void BroadcastCopy(const BroadcastIndex& ix, int64_t total, size_t itemsize, const void* x, void* y, Context* ctx);
// The reverse for a view without stretched dims: y[off(i)] = x[i] (a slice's gradient).
template <class Context>
void ScatterCopy(const BroadcastIndex& ix, int64_t total, size_t itemsize, const void* x, void* y, Context* ctx);

}  // namespace hetnet::math
