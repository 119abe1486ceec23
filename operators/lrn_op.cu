// LRN on CUDA: one thread per (image, pixel) column slides the channel window (running sums, as the
// CPU loops in lrn_op.cc do), so the work is O(C) per column, O(elements) in all, whatever `size`
// is (lrn_op.h's per-element math costs O(min(size, C)) per element, its square in the gradient).
// Sums are LRNWindowSums (double, non-finite terms counted), like the CPU's, and round the same way into float.
// Checked on an H200 (2026-11-26) by the op harness's CUDA column (LRN and its gradient vs the CPU).
#include "device/cuda/cuda_context.h"
#include "operators/lrn_op.h"

namespace hetnet {

namespace {

// x[k]^2 along one column (channel stride HW).
struct SquareAt {
  const float* col;
  int64_t HW;
  __device__ double operator()(int64_t k) const {
    const double v = col[k * HW];
    return v * v;
  }
};

// Running sum of x^2 over channels [m + lo, m + hi) clamped to [0, C), for m moving up by one.
struct SquareWindow {
  SquareAt f;
  int64_t C, lo, hi, m;
  LRNWindowSum sum;
  __device__ void Start(int64_t m0) {
    m = m0;
    sum = LRNWindowSum{};
    const int64_t a = m0 + lo > 0 ? m0 + lo : 0, b = m0 + hi < C ? m0 + hi : C;
    for (int64_t k = a; k < b; ++k) sum.Add(f(k), 1);
  }
  __device__ void Step() {  // the window of m + 1: channel m + lo leaves, m + hi enters
    const int64_t out = m + lo, in = m + hi;
    if (out >= 0 && out < C) sum.Add(f(out), -1);
    if (in >= 0 && in < C) sum.Add(f(in), 1);
    ++m;
  }
  __device__ float Scale(const LRNParams& p) const {
    return p.bias + p.alpha / p.size * static_cast<float>(sum.Value());
  }
};

__device__ SquareWindow ScaleWindow(const LRNParams& p, const float* xcol) {
  SquareWindow w;
  w.f = SquareAt{xcol, p.HW};
  w.C = p.C;
  w.lo = -static_cast<int64_t>(p.pre_pad);
  w.hi = static_cast<int64_t>(p.size) - p.pre_pad;
  w.m = 0;
  w.sum = LRNWindowSum{};
  return w;
}

__global__ void LRNForwardCUDA(LRNParams p, int64_t columns, const float* x, float* y, float* scale) {
  HN_CUDA_KERNEL_LOOP(t, columns) {
    const int64_t base = (t / p.HW) * p.C * p.HW + t % p.HW;
    SquareWindow w = ScaleWindow(p, x + base);
    w.Start(0);
    for (int64_t c = 0; c < p.C; ++c) {
      const int64_t i = base + c * p.HW;
      const float s = w.Scale(p);
      scale[i] = s;
      y[i] = x[i] * powf(s, -p.beta);
      w.Step();
    }
  }
}

// dX[c] = dY[c] scale[c]^-beta - 2 alpha beta / size * X[c] * sum_{c' in [c + pre_pad - size + 1, c + pre_pad]} r[c'],
// r = dY Y / scale. The r window slides too; r at the channels entering and leaving it is
// computed from two more scale windows that move along with them (no scratch memory).
__global__ void LRNBackwardCUDA(LRNParams p, int64_t columns, const float* x, const float* y, const float* dy,
                                float* dx) {
  HN_CUDA_KERNEL_LOOP(t, columns) {
    const int64_t base = (t / p.HW) * p.C * p.HW + t % p.HW;
    const float* xc = x + base;
    const float* yc = y + base;
    const float* dyc = dy + base;
    float* dxc = dx + base;
    const int64_t HW = p.HW, C = p.C;
    const int64_t lo2 = static_cast<int64_t>(p.pre_pad) - p.size + 1;  // <= 0
    const int64_t hi2 = static_cast<int64_t>(p.pre_pad) + 1;           // > 0
    auto r = [&](int64_t k, const SquareWindow& w) {  // w.m == k
      return static_cast<double>(dyc[k * HW] * yc[k * HW] / w.Scale(p));
    };
    // The r window of channel 0: [0, min(hi2, C)); `enter` then sits on the next channel to enter.
    SquareWindow enter = ScaleWindow(p, xc);
    enter.Start(0);
    LRNWindowSum rsum;
    const int64_t b = hi2 < C ? hi2 : C;
    for (int64_t k = 0; k < b; ++k) {
      rsum.Add(r(k, enter), 1);
      enter.Step();
    }
    SquareWindow leave = ScaleWindow(p, xc);
    bool leave_started = false;
    SquareWindow here = ScaleWindow(p, xc);
    here.Start(0);
    const float k2 = 2.f * p.alpha * p.beta / p.size;
    for (int64_t c = 0; c < C; ++c) {
      const int64_t i = c * HW;
      dxc[i] = dyc[i] * powf(here.Scale(p), -p.beta) - k2 * xc[i] * static_cast<float>(rsum.Value());
      const int64_t l = c + lo2;  // leaves the r window of c + 1 (reaches 0 first, then goes up by one)
      if (l >= 0 && l < C) {
        if (!leave_started) {
          leave.Start(l);
          leave_started = true;
        }
        rsum.Add(r(l, leave), -1);
        leave.Step();
      }
      const int64_t e = c + hi2;  // enters it (enter.m == e)
      if (e < C) {
        rsum.Add(r(e, enter), 1);
        enter.Step();
      }
      here.Step();
    }
  }
}

}  // namespace

template <>
void LRNForward<CUDAContext>(const LRNParams& p, const float* x, float* y, float* scale, CUDAContext* ctx) {
  const int64_t columns = p.N * p.HW;
  if (columns == 0 || p.C == 0) return;
  LRNForwardCUDA<<<CudaBlocks(columns), kCudaThreads, 0, ctx->stream()>>>(p, columns, x, y, scale);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void LRNBackward<CUDAContext>(const LRNParams& p, const float* x, const float* y, const float* dy, float* dx,
                              CUDAContext* ctx) {
  const int64_t columns = p.N * p.HW;
  if (columns == 0 || p.C == 0) return;
  LRNBackwardCUDA<<<CudaBlocks(columns), kCudaThreads, 0, ctx->stream()>>>(p, columns, x, y, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(LRN, LRNOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(LRNGradient, LRNGradientOp<CUDAContext>);

}  // namespace hetnet
