// SpatialBN on CUDA, default engine (the CUDNN engine, spatial_bn_op_cudnn.cc, is tried first and
// hands it the multi-batch and NHWC forms). Per-channel sums come from ChannelSums /
// ChannelBackpropSums (one block per channel, float64); the per-channel math is spatial_bn_op.h's,
// shared with the CPU; the rest is elementwise.
#include "device/cuda/cuda_context.h"
#include "operators/spatial_bn_op.h"

namespace hetnet {

namespace {
__global__ void ApplyKernel(ChannelLayout d, const float* x, const float* mean, const float* rstd, const float* scale,
                            const float* bias, float* y) {
  HN_CUDA_KERNEL_LOOP(i, d.numel()) {
    const int64_t c = (i / d.sc) % d.C;
    y[i] = (x[i] - mean[c]) * rstd[c] * scale[c] + bias[c];
  }
}

template <typename T>
__global__ void StatsKernel(int64_t C, const T* sum, const T* sumsq, BNCount count, float eps, float momentum,
                            float* mean, float* rstd, float* rm, float* rv) {
  const double M = BNCountValue(count);
  HN_CUDA_KERNEL_LOOP(c, C) BNChannelStats(c, sum, sumsq, M, eps, momentum, mean, rstd, rm, rv);
}

__global__ void InvStdKernel(int64_t C, float eps, const float* var, float* rstd) {
  HN_CUDA_KERNEL_LOOP(c, C) rstd[c] = static_cast<float>(1.0 / sqrt(double(var[c]) + eps));
}

__global__ void RunningUpdateKernel(int64_t C, float momentum, float eps, const float* mean, const float* rstd,
                                    float* rm, float* rv) {
  HN_CUDA_KERNEL_LOOP(c, C) {
    rm[c] = momentum * rm[c] + (1.f - momentum) * mean[c];
    rv[c] = momentum * rv[c] + (1.f - momentum) * (1.f / (rstd[c] * rstd[c]) - eps);
  }
}

__global__ void BackwardChannelKernel(int64_t C, bool is_test, const float* G, const float* B, BNCount count,
                                      double n_batches, const float* scale, const float* mean, const float* rstd,
                                      float* dscale, float* dbias, float* coef) {
  const double M = BNCountValue(count);
  HN_CUDA_KERNEL_LOOP(c, C) BNBackwardChannel(c, C, is_test, G, B, M, n_batches, scale, mean, rstd, dscale, dbias, coef);
}

__global__ void BackwardApplyKernel(ChannelLayout d, const float* coef, const float* x, const float* dy, float* dx) {
  HN_CUDA_KERNEL_LOOP(i, d.numel()) {
    const int64_t c = (i / d.sc) % d.C;
    dx[i] = coef[c] * dy[i] + coef[d.C + c] * x[i] + coef[2 * d.C + c];
  }
}
}  // namespace

template <>
void BNApply<CUDAContext>(const ChannelLayout& d, const float* x, const float* mean, const float* rstd,
                          const float* scale, const float* bias, float* y, CUDAContext* ctx) {
  const int64_t n = d.numel();
  if (n == 0) return;
  ApplyKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(d, x, mean, rstd, scale, bias, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNStatsFromSums<CUDAContext>(int64_t C, const void* sum, const void* sumsq, DataType dtype, const BNCount& count,
                                  float eps, float momentum, float* mean, float* rstd, float* rm, float* rv,
                                  CUDAContext* ctx) {
  if (C == 0) return;
  if (dtype == DataType::Double)
    StatsKernel<double><<<CudaBlocks(C), kCudaThreads, 0, ctx->stream()>>>(
        C, static_cast<const double*>(sum), static_cast<const double*>(sumsq), count, eps, momentum, mean, rstd, rm, rv);
  else
    StatsKernel<float><<<CudaBlocks(C), kCudaThreads, 0, ctx->stream()>>>(
        C, static_cast<const float*>(sum), static_cast<const float*>(sumsq), count, eps, momentum, mean, rstd, rm, rv);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNInvStd<CUDAContext>(int64_t C, const float* var, float eps, float* rstd, CUDAContext* ctx) {
  if (C == 0) return;
  InvStdKernel<<<CudaBlocks(C), kCudaThreads, 0, ctx->stream()>>>(C, eps, var, rstd);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNRunningUpdate<CUDAContext>(int64_t C, float momentum, float eps, const float* mean, const float* rstd,
                                  float* running_mean, float* running_var, CUDAContext* ctx) {
  if (C == 0) return;
  RunningUpdateKernel<<<CudaBlocks(C), kCudaThreads, 0, ctx->stream()>>>(C, momentum, eps, mean, rstd, running_mean,
                                                                         running_var);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BNBackward<CUDAContext>(const ChannelLayout& d, bool is_test, const float* G, const float* B, const BNCount& count,
                             double n_batches, const float* x, const float* scale, const float* dy, const float* mean,
                             const float* rstd, float* coef, float* dscale, float* dbias, float* dx, CUDAContext* ctx) {
  if (d.C == 0) return;
  BackwardChannelKernel<<<CudaBlocks(d.C), kCudaThreads, 0, ctx->stream()>>>(d.C, is_test, G, B, count, n_batches,
                                                                             scale, mean, rstd, dscale, dbias, coef);
  HN_CUDA_CHECK(cudaGetLastError());
  const int64_t n = d.numel();
  if (n == 0) return;
  BackwardApplyKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(d, coef, x, dy, dx);
  HN_CUDA_CHECK(cudaGetLastError());
}

REGISTER_CUDA_OPERATOR(SpatialBN, SpatialBNOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(SpatialBNGradient, SpatialBNGradientOp<CUDAContext>);

}  // namespace hetnet
