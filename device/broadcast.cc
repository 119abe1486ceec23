// Numpy broadcasting: the host-side plans and the CPU loops (device/broadcast.h). The CPU loops walk
// the innermost merged dim with its strides, so the per-element work is one load per input.
#include "device/broadcast.h"

#include <algorithm>
#include <cstring>

#include "core/context.h"
#include "core/error.h"
#include "core/tensor.h"

namespace hetnet::math {

bool NumpyBroadcastShape(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out) {
  size_t n = 0;
  for (const auto& s : shapes) n = std::max(n, s.size());
  out->assign(n, 1);
  for (const auto& s : shapes) {
    const size_t off = n - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = (*out)[off + d];
      if (s[d] == 1 || s[d] == o) continue;
      if (o != 1) return false;
      o = s[d];
    }
  }
  return true;
}

std::string DescribeShapes(const std::vector<std::string>& names, const std::vector<std::vector<int64_t>>& shapes) {
  std::string r;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) r += i + 1 == shapes.size() ? " and " : ", ";
    r += "input " + std::to_string(i) + " ('" + (i < names.size() ? names[i] : std::string("?")) + "') of shape " +
         ShapeToString(shapes[i]);
  }
  return r;
}

BroadcastIndex MakeBroadcastIndex(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& inputs) {
  const int n = static_cast<int>(out.size()), K = static_cast<int>(inputs.size());
  HN_ENFORCE(K >= 1 && K <= kMaxBroadcastInputs, "broadcast: ", K, " inputs (at most ", kMaxBroadcastInputs, ")");
  // Contiguous strides of each input, right-aligned to out; 0 where the input has a 1.
  std::vector<std::vector<int64_t>> st(K, std::vector<int64_t>(n, 0));
  for (int k = 0; k < K; ++k) {
    const auto& s = inputs[k];
    const int off = n - static_cast<int>(s.size());
    int64_t stride = 1;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
      st[k][off + d] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
  }
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> merged(K);
  for (int d = 0; d < n; ++d) {
    if (out[d] == 1) continue;
    bool same = !dims.empty();
    for (int k = 0; k < K && same; ++k) same = (st[k][d] == 0) == (merged[k].back() == 0);
    if (same) {  // contiguous inputs: the merged dim steps by the inner dim's stride
      dims.back() *= out[d];
      for (int k = 0; k < K; ++k) merged[k].back() = st[k][d];
    } else {
      dims.push_back(out[d]);
      for (int k = 0; k < K; ++k) merged[k].push_back(st[k][d]);
    }
  }
  HN_CHECK_KIND(kUnsupported, dims.size() <= static_cast<size_t>(kMaxBroadcastDims), "broadcast to ",
                ShapeToString(out), " needs ", dims.size(), " dims after merging; at most ", kMaxBroadcastDims,
                " are supported");
  BroadcastIndex ix;
  ix.ndim = static_cast<int>(dims.size());
  ix.num_inputs = K;
  for (int d = 0; d < ix.ndim; ++d) {
    ix.dims[d] = dims[d];
    for (int k = 0; k < K; ++k) ix.strides[k][d] = merged[k][d];
  }
  return ix;
}

ReduceToShapeIndex MakeReduceToShapeIndex(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  const int n = static_cast<int>(out.size()), off = n - static_cast<int>(in.size());
  ReduceToShapeIndex r;
  int last = -1;  // 0 kept, 1 reduced: the status of the previous dim taken
  int64_t stride = 1;
  std::vector<int64_t> out_stride(n);
  for (int d = n - 1; d >= 0; --d) { out_stride[d] = stride; stride *= out[d]; }
  for (int d = 0; d < n; ++d) {
    if (out[d] == 1) continue;
    const int reduced = (d < off || in[d - off] == 1) ? 1 : 0;
    int& nd = reduced ? r.reduced_ndim : r.kept_ndim;
    int64_t* dims = reduced ? r.reduced_dims : r.kept_dims;
    int64_t* strides = reduced ? r.reduced_strides : r.kept_strides;
    if (reduced == last) {
      dims[nd - 1] *= out[d];
      strides[nd - 1] = out_stride[d];
    } else {
      HN_CHECK_KIND(kUnsupported, nd < kMaxBroadcastDims, "broadcast gradient from ", ShapeToString(out), " to ",
                    ShapeToString(in), " needs more than ", kMaxBroadcastDims, " dims after merging");
      dims[nd] = out[d];
      strides[nd] = out_stride[d];
      ++nd;
    }
    last = reduced;
  }
  for (int d = 0; d < r.reduced_ndim; ++d) r.reduced_count *= r.reduced_dims[d];
  r.to_input = MakeBroadcastIndex(out, {in});
  return r;
}

namespace {
// The innermost merged dim is walked with its strides; the rest through BroadcastOffsets.
template <BinaryOp Op, typename T>
void NumpyLoop(const BroadcastIndex& ix, int64_t total, const T* a, const T* b, T* c) {
  ForEachBroadcastRow(ix, total, [&](int64_t base, const int64_t* off, int64_t inner, const int64_t* step) {
    const T* ap = a + off[0];
    const T* bp = b + off[1];
    T* cp = c + base;
    if (step[0] == 1 && step[1] == 1) {
      for (int64_t q = 0; q < inner; ++q) cp[q] = ApplyBinary<Op, T>(ap[q], bp[q]);
    } else if (step[1] == 0) {
      const T y = bp[0];
      for (int64_t q = 0; q < inner; ++q) cp[q] = ApplyBinary<Op, T>(ap[q * step[0]], y);
    } else {
      const T x = ap[0];
      for (int64_t q = 0; q < inner; ++q) cp[q] = ApplyBinary<Op, T>(x, bp[q]);
    }
  });
}

template <typename U>
void CopyLoop(const BroadcastIndex& ix, int64_t total, const U* x, U* y) {
  for (int64_t i = 0; i < total; ++i) {
    int64_t off[kMaxBroadcastInputs];
    BroadcastOffsets(ix, i, off);
    y[i] = x[off[0]];
  }
}
template <typename U>
void ScatterLoop(const BroadcastIndex& ix, int64_t total, const U* x, U* y) {
  for (int64_t i = 0; i < total; ++i) {
    int64_t off[kMaxBroadcastInputs];
    BroadcastOffsets(ix, i, off);
    y[off[0]] = x[i];
  }
}
}  // namespace

template <typename T, class Context>
void NumpyBroadcastBinary(BinaryOp op, const BroadcastIndex& ix, int64_t total, const T* a, const T* b, T* c,
                          Context*) {
  switch (op) {
    case BinaryOp::Add: return NumpyLoop<BinaryOp::Add, T>(ix, total, a, b, c);
    case BinaryOp::Sub: return NumpyLoop<BinaryOp::Sub, T>(ix, total, a, b, c);
    case BinaryOp::Mul: return NumpyLoop<BinaryOp::Mul, T>(ix, total, a, b, c);
    case BinaryOp::Div: return NumpyLoop<BinaryOp::Div, T>(ix, total, a, b, c);
  }
}
#define HN_INSTANTIATE_NUMPY(T)                                                                               \
  template void NumpyBroadcastBinary<T, CPUContext>(BinaryOp, const BroadcastIndex&, int64_t, const T*, const T*, \
                                                    T*, CPUContext*);
HN_FOR_EACH_BINARY_MATH_TYPE(HN_INSTANTIATE_NUMPY)
HN_INSTANTIATE_NUMPY(uint32_t)  // CPU only (ONNX's unsigned types)
HN_INSTANTIATE_NUMPY(uint64_t)
#undef HN_INSTANTIATE_NUMPY

// Row-wise accumulation into y (x is read once, in order). Without reduced dims it is a copy, which
// may be in place (y == x).
template <>
void ReduceSumToShape<CPUContext>(const ReduceToShapeIndex& r, int64_t y_numel, const float* x, float* y,
                                  CPUContext*) {
  if (r.reduced_count == 1) {
    if (y != x) std::memcpy(y, x, static_cast<size_t>(y_numel) * sizeof(float));
    return;
  }
  std::fill(y, y + y_numel, 0.f);
  int64_t total = 1;
  for (int d = 0; d < r.to_input.ndim; ++d) total *= r.to_input.dims[d];
  ForEachBroadcastRow(r.to_input, total, [&](int64_t base, const int64_t* off, int64_t inner, const int64_t* step) {
    const float* xr = x + base;
    float* yr = y + off[0];
    if (step[0] == 1) {
      for (int64_t q = 0; q < inner; ++q) yr[q] += xr[q];
    } else {
      float s = 0.f;
      for (int64_t q = 0; q < inner; ++q) s += xr[q];
      yr[0] += s;
    }
  });
}

template <>
void BroadcastCopy<CPUContext>(const BroadcastIndex& ix, int64_t total, size_t itemsize, const void* x, void* y,
                               CPUContext*) {
  switch (itemsize) {
    case 1: return CopyLoop(ix, total, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
    case 2: return CopyLoop(ix, total, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y));
    case 4: return CopyLoop(ix, total, static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y));
    case 8: return CopyLoop(ix, total, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y));
    default: HN_THROW(kUnsupported, "broadcast copy of ", itemsize, "-byte elements is not supported");
  }
}

template <>
void ScatterCopy<CPUContext>(const BroadcastIndex& ix, int64_t total, size_t itemsize, const void* x, void* y,
                             CPUContext*) {
  switch (itemsize) {
    case 1: return ScatterLoop(ix, total, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
    case 2: return ScatterLoop(ix, total, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y));
    case 4: return ScatterLoop(ix, total, static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y));
    case 8: return ScatterLoop(ix, total, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y));
    default: HN_THROW(kUnsupported, "scatter copy of ", itemsize, "-byte elements is not supported");
  }
}

}  // namespace hetnet::math
