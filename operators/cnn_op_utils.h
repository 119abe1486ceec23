// Small helpers shared by the CNN/MLP operator files (leaky_relu, prelu, cross_entropy, accuracy,
// matmul, concat_split, transpose, squeeze, cast, clip, reduce, channel_shuffle): dtype and axis checks
// whose messages name the blob, and a fixed-capacity dims array that CPU and CUDA kernels both index
// (so strided index arithmetic is written once).
#pragma once

#include <cstdint>
#include <vector>

#include "core/operator.h"

#if defined(__CUDACC__)
#define HN_HOST_DEVICE __host__ __device__
#else
#define HN_HOST_DEVICE
#endif

namespace hetnet {

inline void EnforceDtype(const caffe2::OperatorDef& def, const Tensor& t, int i, DataType want) {
  HN_ENFORCE(t.dtype() == want, def.type(), ": input ", i, " ('", def.input(i), "') is ", DataTypeName(t.dtype()),
             " but ", DataTypeName(want), " is required");
}
inline void EnforceFloatInput(const caffe2::OperatorDef& def, const Tensor& t, int i) {
  EnforceDtype(def, t, i, DataType::Float);
}
inline void EnforceSameShape(const caffe2::OperatorDef& def, const Tensor& a, int ia, const Tensor& b, int ib) {
  HN_ENFORCE(a.shape() == b.shape(), def.type(), ": input ", ia, " ('", def.input(ia), "') has shape ",
             a.ShapeString(), " but input ", ib, " ('", def.input(ib), "') has shape ", b.ShapeString());
}
// Axis in [-ndim, ndim) made non-negative; the message names input `input`.
inline int CanonicalAxisFor(const caffe2::OperatorDef& def, int axis, int ndim, int input) {
  HN_ENFORCE(axis >= -ndim && axis < ndim, def.type(), ": axis ", axis, " is out of range for input ", input, " ('",
             def.input(input), "') with ", ndim, " dims");
  return axis < 0 ? axis + ndim : axis;
}
inline int64_t ProdDims(const std::vector<int64_t>& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e && i < s.size(); ++i) p *= s[i];
  return p;
}

// Strided index over up to kMaxDims dims, passed by value to CUDA kernels: Offset(i) decomposes the
// linear index i over `sizes` (row-major) and returns sum(coord[d] * strides[d]).
constexpr int kMaxDims = 8;
struct StridedIndex {
  int n = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  HN_HOST_DEVICE int64_t Offset(int64_t i) const {
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
};
inline StridedIndex MakeStridedIndex(const caffe2::OperatorDef& def, const std::vector<int64_t>& sizes,
                                     const std::vector<int64_t>& strides) {
  HN_CHECK_KIND(kUnsupported, sizes.size() <= static_cast<size_t>(kMaxDims), def.type(), ": at most ", kMaxDims,
                " dims are supported, got ", sizes.size());
  StridedIndex s;
  s.n = static_cast<int>(sizes.size());
  for (int i = 0; i < s.n; ++i) {
    s.sizes[i] = sizes[i] > 0 ? sizes[i] : 1;  // an empty dim means no elements: never indexed
    s.strides[i] = strides[i];
  }
  return s;
}
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * dims[i + 1];
  return st;
}

// Size of a non-string dtype in bytes, or an error naming the input.
inline size_t PlainItemSize(const caffe2::OperatorDef& def, const Tensor& t, int i) {
  HN_CHECK_KIND(kUnsupported, t.dtype() != DataType::String, def.type(), ": input ", i, " ('", def.input(i),
                "') is a string tensor; only numeric and bool tensors are supported");
  return t.itemsize();
}

}  // namespace hetnet

#include "device/math.h"

namespace hetnet {
// C = op(A) op(B) (beta 0) with empty products handled here: K == 0 writes zeros (cuBLAS refuses a
// leading dimension of 0).
template <class Context>
void GemmOrZero(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C,
                Context* ctx) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    math::Set<float, Context>(M * N, 0.f, C, ctx);
    return;
  }
  math::Gemm<Context>(ta, tb, M, N, K, 1.f, A, B, 0.f, C, ctx);
}
}  // namespace hetnet
