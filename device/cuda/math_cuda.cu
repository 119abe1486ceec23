// CUDA math: cuBLAS sgemm for GEMM (row-major through the transposed-product trick), simple kernels
// for the rest. Everything is queued on the context's stream.
#include <vector>

#include "core/half.h"
#include "core/types.h"
#include "device/broadcast.h"
#include "device/cuda/cuda_context.h"
#include "device/divide.h"
#include "device/math.h"

namespace hetnet {
namespace math {

template <>
void Gemm<CUDAContext>(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       const float* B, float beta, float* C, CUDAContext* ctx) {
  if (M == 0 || N == 0) return;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const int lda = static_cast<int>(trans_a ? M : K);
  const int ldb = static_cast<int>(trans_b ? K : N);
  const cublasOperation_t ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  HN_CUBLAS_CHECK(cublasSgemm(ctx->cublas_handle(), tb, ta, static_cast<int>(N), static_cast<int>(M),
                              static_cast<int>(K), &alpha, B, ldb, A, lda, &beta, C, static_cast<int>(N)));
}

namespace {
template <typename T>
__global__ void SetKernel(int64_t n, T value, T* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = value;
}
__global__ void ScaleKernel(int64_t n, float alpha, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] = alpha * x[i];
}
__global__ void AxpyKernel(int64_t n, float alpha, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(i, n) y[i] += alpha * x[i];
}
template <typename T>
__global__ void BroadcastKernel(BinaryOp op, int64_t total, int64_t n, int64_t post, const T* a, const T* b,
                                T* c) {
  HN_CUDA_KERNEL_LOOP(i, total) {
    const T x = a[i];
    const T y = b[(i / post) % n];
    switch (op) {  // as the CPU and numpy broadcasting compute them (integers wrap)
      case BinaryOp::Add: c[i] = ApplyBinary<BinaryOp::Add>(x, y); break;
      case BinaryOp::Sub: c[i] = ApplyBinary<BinaryOp::Sub>(x, y); break;
      case BinaryOp::Mul: c[i] = ApplyBinary<BinaryOp::Mul>(x, y); break;
      case BinaryOp::Div: c[i] = ApplyBinary<BinaryOp::Div>(x, y); break;
    }
  }
}
// One thread per output element j; it walks the pre x post slab of x that broadcasts from j.
__global__ void ReduceSumPreMidPostKernel(int64_t pre, int64_t n, int64_t post, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(j, n) {
    float s = 0.f;
    for (int64_t p = 0; p < pre; ++p) {
      const float* xp = x + (p * n + j) * post;
      for (int64_t q = 0; q < post; ++q) s += xp[q];
    }
    y[j] = s;
  }
}
}  // namespace

template <typename T, class Context>
void Set(int64_t n, T value, T* y, Context* ctx) {
  if (n == 0) return;
  SetKernel<T><<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, value, y);
  HN_CUDA_CHECK(cudaGetLastError());
}
#define HN_INSTANTIATE_SET(T, _) template void Set<T, CUDAContext>(int64_t, T, T*, CUDAContext*);
HN_FOR_EACH_POD_TYPE(HN_INSTANTIATE_SET)
#undef HN_INSTANTIATE_SET

template <>
void Scale<CUDAContext>(int64_t n, float alpha, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  ScaleKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, alpha, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void Axpy<CUDAContext>(int64_t n, float alpha, const float* x, float* y, CUDAContext* ctx) {
  if (n == 0) return;
  AxpyKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(n, alpha, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <typename T, class Context>
void BroadcastBinary(BinaryOp op, int64_t pre, int64_t n, int64_t post, const T* a, const T* b, T* c,
                     Context* ctx) {
  const int64_t total = pre * n * post;
  if (total == 0) return;
  BroadcastKernel<T><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(op, total, n, post, a, b, c);
  HN_CUDA_CHECK(cudaGetLastError());
}
#define HN_INSTANTIATE_BINARY(T)                                                                      \
  template void BroadcastBinary<T, CUDAContext>(BinaryOp, int64_t, int64_t, int64_t, const T*, const T*, T*, \
                                                CUDAContext*);
HN_FOR_EACH_BINARY_MATH_TYPE(HN_INSTANTIATE_BINARY)
HN_INSTANTIATE_BINARY(uint32_t)  // ONNX's unsigned types, as on the CPU (device/math_cpu.cc)
HN_INSTANTIATE_BINARY(uint64_t)
#undef HN_INSTANTIATE_BINARY

template <>
void ReduceSumPreMidPost<CUDAContext>(int64_t pre, int64_t n, int64_t post, const float* x, float* y,
                                      CUDAContext* ctx) {
  if (n == 0) return;
  ReduceSumPreMidPostKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(pre, n, post, x, y);
  HN_CUDA_CHECK(cudaGetLastError());
}

namespace {
// Draws on the host and copies: cudaMemcpyAsync from pageable memory returns only once the source
// has been staged, so the temporary may go out of scope right after.
template <typename Dist>
void DrawAndCopy(int64_t n, Dist dist, float* y, std::mt19937& gen, CUDAContext* ctx) {
  if (n == 0) return;
  std::vector<float> host(static_cast<size_t>(n));
  for (auto& v : host) v = dist(gen);
  ctx->CopyBytes(host.size() * sizeof(float), host.data(), Device::CPU(), y, ctx->device());
  HN_CUDA_CHECK(cudaStreamSynchronize(ctx->stream()));
}
}  // namespace

template <>
void RandUniform<CUDAContext>(int64_t n, float a, float b, float* y, std::mt19937& gen, CUDAContext* ctx) {
  DrawAndCopy(n, std::uniform_real_distribution<float>(a, b), y, gen, ctx);
}

template <>
void RandGaussian<CUDAContext>(int64_t n, float mean, float stddev, float* y, std::mt19937& gen,
                               CUDAContext* ctx) {
  DrawAndCopy(n, std::normal_distribution<float>(mean, stddev), y, gen, ctx);
}

namespace {
// One thread per column element (im2col) or per image pixel (col2im, a gather: no atomics).
__global__ void Im2ColKernel(Im2ColGeom g, const float* im, float* col) {
  const int64_t ohw = g.OH * g.OW, total = g.C * g.kh * g.kw * ohw;
  HN_CUDA_KERNEL_LOOP(idx, total) {
    const int64_t r = idx / ohw, p = idx % ohw;
    const int64_t c = r / (g.kh * g.kw);
    const int i = (int)((r / g.kw) % g.kh), j = (int)(r % g.kw);
    const int64_t y = p / g.OW * g.sh - g.pt + (int64_t)i * g.dh;
    const int64_t x = p % g.OW * g.sw - g.pl + (int64_t)j * g.dw;
    col[idx] = (y >= 0 && y < g.H && x >= 0 && x < g.W) ? im[(c * g.H + y) * g.W + x] : 0.f;
  }
}
__global__ void Col2ImKernel(Im2ColGeom g, const float* col, float* im) {
  const int64_t total = g.C * g.H * g.W, ohw = g.OH * g.OW;
  HN_CUDA_KERNEL_LOOP(idx, total) {
    const int64_t c = idx / (g.H * g.W), h = (idx / g.W) % g.H, w = idx % g.W;
    float s = 0.f;
    for (int i = 0; i < g.kh; ++i) {
      const int64_t ty = h + g.pt - (int64_t)i * g.dh;
      if (ty < 0 || ty % g.sh) continue;
      const int64_t y = ty / g.sh;
      if (y >= g.OH) continue;
      for (int j = 0; j < g.kw; ++j) {
        const int64_t tx = w + g.pl - (int64_t)j * g.dw;
        if (tx < 0 || tx % g.sw) continue;
        const int64_t x = tx / g.sw;
        if (x >= g.OW) continue;
        s += col[((c * g.kh + i) * g.kw + j) * ohw + y * g.OW + x];
      }
    }
    im[idx] = s;
  }
}
}  // namespace

template <>
void Im2Col<CUDAContext>(const Im2ColGeom& g, const float* im, float* col, CUDAContext* ctx) {
  const int64_t n = g.C * g.kh * g.kw * g.OH * g.OW;
  if (n == 0) return;
  Im2ColKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(g, im, col);
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void Col2Im<CUDAContext>(const Im2ColGeom& g, const float* col, float* im, CUDAContext* ctx) {
  const int64_t n = g.C * g.H * g.W;
  if (n == 0) return;
  Col2ImKernel<<<CudaBlocks(n), kCudaThreads, 0, ctx->stream()>>>(g, col, im);
  HN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace math
}  // namespace hetnet
