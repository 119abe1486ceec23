// SpatialBN on CUDA, default engine (the CUDNN engine, spatial_bn_op_cudnn.cc, is tried first):
// one block per channel for the statistics and reductions, elementwise kernels for the rest.
// Statistics are accumulated in float32 per thread and combined in shared memory.
#include "device/cuda/cuda_context.h"
#include "operators/spatial_bn_op.h"

namespace hetnet {

namespace {
constexpr int kBNThreads = 256;

// Sums f(n, k) over the channel's N x HW elements into a block-wide total (thread 0 returns it).
template <typename F>
__device__ float BlockChannelSum(const BNDims d, F f) {
  __shared__ float buf[kBNThreads];
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < d.N * d.HW; i += blockDim.x) s += f(i / d.HW, i % d.HW);
  buf[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) buf[threadIdx.x] += buf[threadIdx.x + w];
    __syncthreads();
  }
  const float total = buf[0];
  __syncthreads();
  return total;
}

__global__ void RunningUpdateKernel(int64_t C, float momentum, float eps, const float* mean, const float* inv,
                                    float* rm, float* rv) {
  HN_CUDA_KERNEL_LOOP(c, C) {
    rm[c] = momentum * rm[c] + (1.f - momentum) * mean[c];
    rv[c] = momentum * rv[c] + (1.f - momentum) * (1.f / (inv[c] * inv[c]) - eps);
  }
}

__global__ void InvStdKernel(int64_t C, float eps, const float* var, float* inv) {
  HN_CUDA_KERNEL_LOOP(c, C) inv[c] = rsqrtf(var[c] + eps);
}

__global__ void MomentsKernel(BNDims d, const float* x, float eps, float momentum, float* mean, float* inv_std,
                              float* rm, float* rv) {
  const int64_t c = blockIdx.x;
  const float* xc = x + c * d.HW;
  const int64_t stride = d.C * d.HW;
  const float cnt = static_cast<float>(d.N * d.HW);
  const float m = BlockChannelSum(d, [&](int64_t n, int64_t k) { return xc[n * stride + k]; }) / cnt;
  const float v = BlockChannelSum(d, [&](int64_t n, int64_t k) { const float t = xc[n * stride + k] - m; return t * t; }) / cnt;
  if (threadIdx.x == 0) {
    mean[c] = m;
    inv_std[c] = rsqrtf(v + eps);
    rm[c] = momentum * rm[c] + (1.f - momentum) * m;
    rv[c] = momentum * rv[c] + (1.f - momentum) * v;
  }
}

__global__ void ApplyKernel(BNDims d, const float* x, const float* mean, const float* inv, const float* scale,
                            const float* bias, float* y) {
  HN_CUDA_KERNEL_LOOP(i, d.N * d.C * d.HW) {
    const int64_t c = (i / d.HW) % d.C;
    y[i] = (x[i] - mean[c]) * inv[c] * scale[c] + bias[c];
  }
}

__global__ void BackwardReduceKernel(BNDims d, const float* x, const float* dy, const float* mean, const float* inv,
                                     float* dscale, float* dbias) {
  const int64_t c = blockIdx.x, stride = d.C * d.HW;
  const float* xc = x + c * d.HW;
  const float* dyc = dy + c * d.HW;
  const float db = BlockChannelSum(d, [&](int64_t n, int64_t k) { return dyc[n * stride + k]; });
  const float ds = BlockChannelSum(
      d, [&](int64_t n, int64_t k) { return dyc[n * stride + k] * (xc[n * stride + k] - mean[c]) * inv[c]; });
  if (threadIdx.x == 0) {
    dbias[c] = db;
    dscale[c] = ds;
  }
}

__global__ void BackwardApplyKernel(BNDims d, bool is_test, const float* x, const float* scale, const float* dy,
                                    const float* mean, const float* inv, const float* dscale, const float* dbias,
                                    float* dx) {
  const float cnt = static_cast<float>(d.N * d.HW);
  HN_CUDA_KERNEL_LOOP(i, d.N * d.C * d.HW) {
    const int64_t c = (i / d.HW) % d.C;
    if (is_test) {
      dx[i] = dy[i] * scale[c] * inv[c];
    } else {
      const float xhat = (x[i] - mean[c]) * inv[c];
      dx[i] = scale[c] * inv[c] * (dy[i] - dbias[c] / cnt - xhat * dscale[c] / cnt);
    }
  }
}
}  // namespace

template <>
void BNApply<CUDAContext>(const BNDims& d, const float* x, const float* mean, const float* inv_std, const float* scale,
                          const float* bias, float* y, CUDAContext* ctx) {
  const int64_t n = d.N * d.C * d.HW;
  if (n == 0) return;
  ApplyKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(d, x, mean, inv_std, scale, bias, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNMoments<CUDAContext>(const BNDims& d, const float* x, float eps, float momentum, float* mean, float* inv_std,
                            float* running_mean, float* running_var, CUDAContext* ctx) {
  if (d.C == 0) return;
  if (d.N == 0) {
    InvStdKernel<<<CudaBlocks(d.C), kCudaThreads, 0, ctx->stream()>>>(d.C, eps, x, inv_std);
  } else {
    MomentsKernel<<<static_cast<unsigned>(d.C), kBNThreads, 0, ctx->stream()>>>(d, x, eps, momentum, mean, inv_std,
                                                                                running_mean, running_var);
  }
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNRunningUpdate<CUDAContext>(int64_t C, float momentum, float eps, const float* mean, const float* inv_std,
                                  float* running_mean, float* running_var, CUDAContext* ctx) {
  if (C == 0) return;
  RunningUpdateKernel<<<CudaBlocks(C), kCudaThreads, 0, ctx->stream()>>>(C, momentum, eps, mean, inv_std, running_mean,
                                                                         running_var);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNBackward<CUDAContext>(const BNDims& d, bool is_test, const float* x, const float* scale, const float* dy,
                             const float* mean, const float* inv_std, float* dx, float* dscale, float* dbias,
                             CUDAContext* ctx) {
  if (d.C == 0) return;
  BackwardReduceKernel<<<static_cast<unsigned>(d.C), kBNThreads, 0, ctx->stream()>>>(d, x, dy, mean, inv_std, dscale,
                                                                                     dbias);
  HN_CUDA_CHECK(cudaGetLastError());
  const int64_t n = d.N * d.C * d.HW;
  if (n == 0) return;
  BackwardApplyKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(d, is_test, x, scale, dy, mean, inv_std,
                                                                         dscale, dbias, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(SpatialBN, SpatialBNOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SpatialBNGradient, SpatialBNGradientOp<CUDAContext>);

}  // namespace hetnet
