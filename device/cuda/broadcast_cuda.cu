// NOT VERIFIED ON A GPU
// Numpy broadcasting on CUDA (device/broadcast.h): grid-stride kernels over the output with the
// plan passed by value; the index math is the CPU's (BroadcastOffsets, ReducedSum, ApplyBinary).
// Compiled with nvcc here, never run: the machine that wrote it had no GPU.
#include "device/broadcast.h"
#include "device/cuda/cuda_context.h"

namespace hetnet::math {

namespace {
template <BinaryOp Op, typename T>
__global__ void NumpyBinaryKernel(BroadcastIndex ix, int64_t total, const T* a, const T* b, T* c) {
  HN_CUDA_KERNEL_LOOP(i, total) {
    int64_t off[kMaxBroadcastInputs];
    BroadcastOffsets(ix, i, off);
    c[i] = ApplyBinary<Op, T>(a[off[0]], b[off[1]]);
  }
}
__global__ void ReduceSumToShapeKernel(ReduceToShapeIndex r, int64_t n, const float* x, float* y) {
  HN_CUDA_KERNEL_LOOP(j, n) y[j] = ReducedSum(r, x, j);
}
// Long sums (a bias-like or scalar input): one block per y element, its threads striding over the
// terms, then a shared-memory tree (blockDim.x is kCudaThreads, a power of two).
__global__ void ReduceSumToShapeBlockKernel(ReduceToShapeIndex r, int64_t n, const float* x, float* y) {
  __shared__ float part[kCudaThreads];
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    const int64_t base = ReducedBase(r, j);
    float s = 0.f;
    for (int64_t t = threadIdx.x; t < r.reduced_count; t += blockDim.x) s += x[base + ReducedTerm(r, t)];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) y[j] = part[0];
    __syncthreads();  // part is reused for the next j
  }
}
template <typename U>
__global__ void BroadcastCopyKernel(BroadcastIndex ix, int64_t total, const U* x, U* y) {
  HN_CUDA_KERNEL_LOOP(i, total) {
    int64_t off[kMaxBroadcastInputs];
    BroadcastOffsets(ix, i, off);
    y[i] = x[off[0]];
  }
}
template <typename U>
__global__ void ScatterCopyKernel(BroadcastIndex ix, int64_t total, const U* x, U* y) {
  HN_CUDA_KERNEL_LOOP(i, total) {
    int64_t off[kMaxBroadcastInputs];
    BroadcastOffsets(ix, i, off);
    y[off[0]] = x[i];
  }
}
template <typename U>
void LaunchScatter(const BroadcastIndex& ix, int64_t total, const void* x, void* y, CUDAContext* ctx) {
  ScatterCopyKernel<U><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(
      ix, total, static_cast<const U*>(x), static_cast<U*>(y));
}
template <BinaryOp Op, typename T>
void LaunchBinary(const BroadcastIndex& ix, int64_t total, const T* a, const T* b, T* c, CUDAContext* ctx) {
  NumpyBinaryKernel<Op, T><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(ix, total, a, b, c);
}
template <typename U>
void LaunchCopy(const BroadcastIndex& ix, int64_t total, const void* x, void* y, CUDAContext* ctx) {
  BroadcastCopyKernel<U><<<CudaBlocks(total), kCudaThreads, 0, ctx->stream()>>>(
      ix, total, static_cast<const U*>(x), static_cast<U*>(y));
}
}  // namespace

template <typename T, class Context>
void NumpyBroadcastBinary(BinaryOp op, const BroadcastIndex& ix, int64_t total, const T* a, const T* b, T* c,
                          Context* ctx) {
  if (total == 0) return;
  switch (op) {
    case BinaryOp::Add: LaunchBinary<BinaryOp::Add, T>(ix, total, a, b, c, ctx); break;
    case BinaryOp::Sub: LaunchBinary<BinaryOp::Sub, T>(ix, total, a, b, c, ctx); break;
    case BinaryOp::Mul: LaunchBinary<BinaryOp::Mul, T>(ix, total, a, b, c, ctx); break;
    case BinaryOp::Div: LaunchBinary<BinaryOp::Div, T>(ix, total, a, b, c, ctx); break;
  }
  HN_CUDA_CHECK(cudaGetLastError());
}
#define HN_INSTANTIATE_NUMPY(T)                                                                                  \
  template void NumpyBroadcastBinary<T, CUDAContext>(BinaryOp, const BroadcastIndex&, int64_t, const T*, const T*, \
                                                     T*, CUDAContext*);
HN_FOR_EACH_BINARY_MATH_TYPE(HN_INSTANTIATE_NUMPY)
HN_INSTANTIATE_NUMPY(uint32_t)  // ONNX's unsigned types, as on the CPU (device/broadcast.cc)
HN_INSTANTIATE_NUMPY(uint64_t)
#undef HN_INSTANTIATE_NUMPY

template <>
void ReduceSumToShape<CUDAContext>(const ReduceToShapeIndex& r, int64_t y_numel, const float* x, float* y,
                                   CUDAContext* ctx) {
  if (y_numel == 0) return;
  if (r.reduced_count >= 1024 && r.reduced_count > y_numel) {
    const int blocks = static_cast<int>(y_numel < 4096 ? y_numel : 4096);
    ReduceSumToShapeBlockKernel<<<blocks, kCudaThreads, 0, ctx->stream()>>>(r, y_numel, x, y);
  } else {
    ReduceSumToShapeKernel<<<CudaBlocks(y_numel), kCudaThreads, 0, ctx->stream()>>>(r, y_numel, x, y);
  }
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void BroadcastCopy<CUDAContext>(const BroadcastIndex& ix, int64_t total, size_t itemsize, const void* x, void* y,
                                CUDAContext* ctx) {
  if (total == 0) return;
  switch (itemsize) {
    case 1: LaunchCopy<uint8_t>(ix, total, x, y, ctx); break;
    case 2: LaunchCopy<uint16_t>(ix, total, x, y, ctx); break;
    case 4: LaunchCopy<uint32_t>(ix, total, x, y, ctx); break;
    case 8: LaunchCopy<uint64_t>(ix, total, x, y, ctx); break;
    default: HN_THROW(kUnsupported, "broadcast copy of ", itemsize, "-byte elements is not supported");
  }
  HN_CUDA_CHECK(cudaGetLastError());
}

template <>
void ScatterCopy<CUDAContext>(const BroadcastIndex& ix, int64_t total, size_t itemsize, const void* x, void* y,
                              CUDAContext* ctx) {
  if (total == 0) return;
  switch (itemsize) {
    case 1: LaunchScatter<uint8_t>(ix, total, x, y, ctx); break;
    case 2: LaunchScatter<uint16_t>(ix, total, x, y, ctx); break;
    case 4: LaunchScatter<uint32_t>(ix, total, x, y, ctx); break;
    case 8: LaunchScatter<uint64_t>(ix, total, x, y, ctx); break;
    default: HN_THROW(kUnsupported, "scatter copy of ", itemsize, "-byte elements is not supported");
  }
  HN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace hetnet::math
