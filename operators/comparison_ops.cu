// Checked on an H200 (2026-11-26) by the op harness's CUDA column: CUDA vs CPU, gradients where cases check them.
// EQ, NE, GT, GE, LT, LE on CUDA: one grid-stride kernel per (comparison, dtype) over the same
// CompareValues as the CPU loop (comparison_ops.h). Compiled here with nvcc, never run: the machine
// that wrote it had no GPU.
#include "device/cuda/cuda_context.h"
#include "operators/comparison_ops.h"

namespace hetnet {

namespace {
template <CompareOp Op, typename T>
__global__ void CompareCUDA(int64_t total, int64_t n, int64_t post, const T* a, const T* b, bool* c) {
  HN_CUDA_KERNEL_LOOP(i, total) c[i] = CompareValues<Op, T>(a[i], b[(i / post) % n]);
}
template <CompareOp Op, typename T>
__global__ void NumpyCompareCUDA(math::BroadcastIndex ix, int64_t total, const T* a, const T* b, bool* c) {
  HN_CUDA_KERNEL_LOOP(i, total) {
    int64_t off[math::kMaxBroadcastInputs];
    math::BroadcastOffsets(ix, i, off);
    c[i] = CompareValues<Op, T>(a[off[0]], b[off[1]]);
  }
}
template <CompareOp Op, typename T>
void LaunchNumpy(const math::BroadcastIndex& ix, int64_t total, const T* a, const T* b, bool* c, CUDAContext* ctx) {
  NumpyCompareCUDA<Op, T><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(ix, total, a, b, c);
}
template <CompareOp Op, typename T>
void Launch(int64_t total, int64_t n, int64_t post, const T* a, const T* b, bool* c, CUDAContext* ctx) {
  CompareCUDA<Op, T><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(total, n, post, a, b, c);
}
}  // namespace

#define HN_COMPARE_CUDA(T)                                                                                  \
  template <>                                                                                               \
  void BroadcastCompare<T, CUDAContext>(CompareOp op, int64_t pre, int64_t n, int64_t post, const T* a,     \
                                        const T* b, bool* c, CUDAContext* ctx) {                            \
    const int64_t total = pre * n * post;                                                                   \
    if (total == 0) return;                                                                                 \
    switch (op) {                                                                                           \
      case CompareOp::EQ: Launch<CompareOp::EQ, T>(total, n, post, a, b, c, ctx); break;                     \
      case CompareOp::NE: Launch<CompareOp::NE, T>(total, n, post, a, b, c, ctx); break;                     \
      case CompareOp::GT: Launch<CompareOp::GT, T>(total, n, post, a, b, c, ctx); break;                     \
      case CompareOp::GE: Launch<CompareOp::GE, T>(total, n, post, a, b, c, ctx); break;                     \
      case CompareOp::LT: Launch<CompareOp::LT, T>(total, n, post, a, b, c, ctx); break;                     \
      case CompareOp::LE: Launch<CompareOp::LE, T>(total, n, post, a, b, c, ctx); break;                     \
    }                                                                                                       \
    HN_CUDA_CHECK(cudaGetLastError());                                                                      \
  }                                                                                                         \
  template <>                                                                                               \
  void NumpyBroadcastCompare<T, CUDAContext>(CompareOp op, const math::BroadcastIndex& ix, int64_t total,    \
                                             const T* a, const T* b, bool* c, CUDAContext* ctx) {           \
    if (total == 0) return;                                                                                 \
    switch (op) {                                                                                           \
      case CompareOp::EQ: LaunchNumpy<CompareOp::EQ, T>(ix, total, a, b, c, ctx); break;                     \
      case CompareOp::NE: LaunchNumpy<CompareOp::NE, T>(ix, total, a, b, c, ctx); break;                     \
      case CompareOp::GT: LaunchNumpy<CompareOp::GT, T>(ix, total, a, b, c, ctx); break;                     \
      case CompareOp::GE: LaunchNumpy<CompareOp::GE, T>(ix, total, a, b, c, ctx); break;                     \
      case CompareOp::LE: LaunchNumpy<CompareOp::LE, T>(ix, total, a, b, c, ctx); break;                     \
      case CompareOp::LT: LaunchNumpy<CompareOp::LT, T>(ix, total, a, b, c, ctx); break;                     \
    }                                                                                                       \
    HN_CUDA_CHECK(cudaGetLastError());                                                                      \
  }
HN_COMPARE_CUDA(float)
HN_COMPARE_CUDA(double)
HN_COMPARE_CUDA(int32_t)
HN_COMPARE_CUDA(int64_t)
HN_COMPARE_CUDA(bool)
HN_COMPARE_CUDA(uint32_t)
HN_COMPARE_CUDA(uint64_t)
#undef HN_COMPARE_CUDA

REGISTER_CUDA_OPERATOR(EQ, ComparisonOp<CUDAContext, CompareOp::EQ>);
REGISTER_CUDA_OPERATOR(NE, ComparisonOp<CUDAContext, CompareOp::NE>);
REGISTER_CUDA_OPERATOR(GT, ComparisonOp<CUDAContext, CompareOp::GT>);
REGISTER_CUDA_OPERATOR(GE, ComparisonOp<CUDAContext, CompareOp::GE>);
REGISTER_CUDA_OPERATOR(LT, ComparisonOp<CUDAContext, CompareOp::LT>);
REGISTER_CUDA_OPERATOR(LE, ComparisonOp<CUDAContext, CompareOp::LE>);

}  // namespace hetnet
