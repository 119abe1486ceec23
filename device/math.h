// Math primitives shared by operators, templated over the execution context. CPU versions live in
// device/math_cpu.cc (Eigen), CUDA versions in device/cuda/math_cuda.cu (cuBLAS and simple kernels).
// All matrices are row-major; all pointers are on the context's device unless noted.
#pragma once

#include <cstdint>
#include <functional>
#include <random>

namespace hetnet {
namespace math {

// C[M,N] = alpha * op(A) * op(B) + beta * C, row-major; op(A) is M x K, op(B) is K x N.
// With beta == 0, C is not read (may hold garbage or NaN).
template <class Context>
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          const float* B, float beta, float* C, Context* ctx);

// y[i] = value for i < n. Instantiated for float, double, int8/16/32/64, uint8/16, bool.
template <typename T, class Context>
void Set(int64_t n, T value, T* y, Context* ctx);

// y = alpha * x (y may alias x).
template <class Context>
void Scale(int64_t n, float alpha, const float* x, float* y, Context* ctx);
// y += alpha * x.
template <class Context>
void Axpy(int64_t n, float alpha, const float* x, float* y, Context* ctx);

enum class BinaryOp { Add, Sub, Mul, Div };

// The broadcast plan shared by elementwise binary ops: A viewed as [pre, n, post], B as [n];
// same-shape operands are pre = post = 1. C = A op B broadcast, C has A's size (may alias A or B
// when the sizes are equal). Instantiated for the types below, on every device.
#define HN_FOR_EACH_BINARY_MATH_TYPE(M) M(float) M(double) M(int32_t) M(int64_t)
template <typename T, class Context>
void BroadcastBinary(BinaryOp op, int64_t pre, int64_t n, int64_t post, const T* a, const T* b, T* c,
                     Context* ctx);

// y[j] = sum over (p, q) of x[p, j, q] for x viewed as [pre, n, post] (the reverse of a broadcast).
template <class Context>
void ReduceSumPreMidPost(int64_t pre, int64_t n, int64_t post, const float* x, float* y, Context* ctx);

// One NCHW image's im2col geometry: C channels of H x W, kernel kh x kw with dilation dh x dw,
// strides sh x sw, top/left pads pt/pl, output OH x OW (bottom/right pads only shape OH/OW).
struct Im2ColGeom {
  int64_t C, H, W;
  int kh, kw, dh, dw, sh, sw, pt, pl;
  int64_t OH, OW;
};
// col[(c * kh + i) * kw + j][y * OW + x] = im[c][y * sh - pt + i * dh][x * sw - pl + j * dw] (0 outside).
template <class Context>
void Im2Col(const Im2ColGeom& g, const float* im, float* col, Context* ctx);
// The adjoint: im = sum of col entries that Im2Col would read from each pixel (im is overwritten).
template <class Context>
void Col2Im(const Im2ColGeom& g, const float* col, float* im, Context* ctx);

// CPU only: the number of worker threads ParallelFor may use (the calling thread's OpenMP team
// size, 1 without OpenMP), and f(i, worker) for every i in [0, n) spread over up to `workers`
// threads (0 <= worker < workers; one thread per worker index at a time) of the intra-op pool
// (device/cpu_thread_pool.h: the caller never waits for a pool thread that has not started).
// Eigen GEMMs called from f run single-threaded when workers > 1.
int CpuWorkers();
void ParallelFor(int64_t n, int workers, const std::function<void(int64_t, int)>& f);

// Random fills. The generator lives on the host; CUDA versions draw on the host with it and copy
// the result (so a seeded op is reproducible on every device).
template <class Context>
void RandUniform(int64_t n, float a, float b, float* y, std::mt19937& gen, Context* ctx);
template <class Context>
void RandGaussian(int64_t n, float mean, float stddev, float* y, std::mt19937& gen, Context* ctx);

}  // namespace math
}  // namespace hetnet
