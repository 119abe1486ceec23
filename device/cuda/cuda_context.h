// CUDA execution context: device guard, a non-blocking stream per (thread, device, stream id),
// and a cuBLAS handle per stream. Used by .cu operator files only; core/ never sees it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/context.h"
#include "device/cuda/cuda_check.h"

namespace hetnet {

// Makes `device` current for the guard's lifetime.
class CUDADeviceGuard {
 public:
  explicit CUDADeviceGuard(int device);
  ~CUDADeviceGuard();

 private:
  int prev_ = -1;
};

class CUDAContext final : public DeviceContext {
 public:
  explicit CUDAContext(int device_id = 0, int stream_id = 0);
  explicit CUDAContext(const caffe2::DeviceOption& opt);
  Device device() const override { return Device::CUDA(device_id_); }
  void SwitchToDevice() override;
  void FinishDeviceComputation() override;
  void CopyBytes(size_t nbytes, const void* src, Device src_dev, void* dst, Device dst_dev) override;
  Allocator* allocator() override;

  int device_id() const { return device_id_; }
  // The calling thread's stream for (device, stream id): operators on one thread share it.
  cudaStream_t stream() const;
  cublasHandle_t cublas_handle() const;
  unsigned random_seed() const { return seed_; }
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;

 private:
  int device_id_ = 0;
  int stream_id_ = 0;
  unsigned seed_ = 0;
};

// The stream of the operator the calling thread last switched to (CUDAContext::SwitchToDevice) on
// `device`, or nullptr: the caching allocator ties a freed block to the stream that freed it.
cudaStream_t CurrentCudaStream(int device);

// How many device blocks the caching allocators have handed out (cache hits included), process-wide:
// an operator that allocates while its work is captured into a CUDA graph would bake a temporary
// block's address into the graph (device/cuda/cuda_graph_net.cc refuses such captures).
uint64_t CudaDeviceAllocations();

// While one lives on a thread, that thread is capturing a CUDA graph (device/cuda/cuda_graph_net.cc):
// CUDAContext::CopyBytes then refuses host memory, whose address (often a temporary's) and
// contents a replay would read again.
class ScopedCudaGraphCapture {
 public:
  ScopedCudaGraphCapture();
  ~ScopedCudaGraphCapture();
  ScopedCudaGraphCapture(const ScopedCudaGraphCapture&) = delete;
  ScopedCudaGraphCapture& operator=(const ScopedCudaGraphCapture&) = delete;
};

// Pinned host memory (cudaHostAlloc), cached; nullptr-free even without a GPU is not promised.
Allocator* GetPinnedHostAllocator();

// Launch configuration for elementwise kernels.
constexpr int kCudaThreads = 256;
inline int CudaBlocks(int64_t n) {
  const int64_t b = (n + kCudaThreads - 1) / kCudaThreads;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}
#define HN_CUDA_KERNEL_LOOP(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)blockDim.x * gridDim.x)

}  // namespace hetnet
