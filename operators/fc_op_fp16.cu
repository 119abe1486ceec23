// FC on float16 tensors with tensor cores: Y = X W^T + b through cublasGemmEx (CUDA_R_16F operands and
// output, CUBLAS_COMPUTE_32F accumulation); Y is first filled with the broadcast bias and the GEMM adds
// to it (beta = 1), so the result is rounded to float16 once. FCOp dispatches here on float16 inputs.
#include <cuda_fp16.h>

#include "device/cuda/cuda_context.h"
#include "core/reduced_precision.h"
#include "operators/fc_op.h"

namespace hetnet {

namespace {
__global__ void BroadcastBiasCUDA(int64_t total, int64_t N, const __half* b, __half* y) {
  HN_CUDA_KERNEL_LOOP(i, total) y[i] = b[i % N];
}
__global__ void HalfReluCUDA(int64_t total, __half* y) {
  HN_CUDA_KERNEL_LOOP(i, total) y[i] = __hgt(y[i], __float2half(0.f)) ? y[i] : __float2half(0.f);
}
}  // namespace

template <>
void FCHalfKernel<CUDAContext>(int64_t M, int64_t N, int64_t K, const Half* x, const Half* w, const Half* b, bool relu,
                               Half* y, CUDAContext* ctx) {
  if (M == 0 || N == 0) return;
  auto* yh = reinterpret_cast<__half*>(y);
  BroadcastBiasCUDA<<<CudaBlocks(M * N), kCudaThreads, 0, ctx->stream()>>>(M * N, N,
                                                                           reinterpret_cast<const __half*>(b), yh);
  HN_CUDA_CHECK(cudaGetLastError());
  const float alpha = 1.f, beta = 1.f;
  // Row-major Y[M, N] = X[M, K] W[N, K]^T is column-major Y^T[N, M] = W^T(as stored: K x N, op T) X^T.
  if (K > 0)
    HN_CUBLAS_CHECK(cublasGemmEx(ctx->cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N),
                               static_cast<int>(M), static_cast<int>(K), &alpha, w, CUDA_R_16F, static_cast<int>(K),
                               x, CUDA_R_16F, static_cast<int>(K), &beta, yh, CUDA_R_16F, static_cast<int>(N),
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  if (relu) {
    HalfReluCUDA<<<CudaBlocks(M * N), kCudaThreads, 0, ctx->stream()>>>(M * N, yh);
    HN_CUDA_CHECK(cudaGetLastError());
  }
}

// Reduced-precision inference (core/reduced_precision.h): X, W and b in float16 on the GPU.
// Run on an H100 (2026-11-27): tests/cpp/test_reduced_precision.cc [gpu] against float32.
REGISTER_REDUCED_PRECISION_KERNEL(FC, CUDA, "", {{DataType::Float16}, 3});

}  // namespace hetnet
