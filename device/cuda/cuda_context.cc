#include "device/cuda/cuda_context.h"

#include "core/seed.h"

#include <map>
#include <random>
#include <utility>

#include "proto/caffe2.pb.h"

namespace hetnet {

CUDADeviceGuard::CUDADeviceGuard(int device) {
  HN_CUDA_CHECK(cudaGetDevice(&prev_));
  if (prev_ != device) HN_CUDA_CHECK(cudaSetDevice(device));
}
CUDADeviceGuard::~CUDADeviceGuard() {
  int cur = -1;
  if (cudaGetDevice(&cur) == cudaSuccess && cur != prev_ && prev_ >= 0) cudaSetDevice(prev_);
}

namespace {
struct CurrentStream {
  int device = -1;
  cudaStream_t stream = nullptr;
};
thread_local CurrentStream current_stream;

// Per-thread CUDA objects: a worker thread never shares a stream (or its cuBLAS handle) with
// another thread, so operators queued from different threads overlap.
struct ThreadCudaObjects {
  std::map<std::pair<int, int>, cudaStream_t> streams;
  std::map<cudaStream_t, cublasHandle_t> cublas;
  ~ThreadCudaObjects() {
    current_stream = CurrentStream{};  // its stream is destroyed below
    for (auto& kv : cublas) cublasDestroy(kv.second);
    for (auto& kv : streams) cudaStreamDestroy(kv.second);
  }
};
ThreadCudaObjects& Objects() {
  thread_local ThreadCudaObjects objs;
  return objs;
}
}  // namespace

CUDAContext::CUDAContext(int device_id, int stream_id)
    : device_id_(device_id), stream_id_(stream_id), seed_(NonDeterministicSeed()) {}

CUDAContext::CUDAContext(const caffe2::DeviceOption& opt)
    : device_id_(opt.device_id()),
      seed_(opt.has_random_seed() ? opt.random_seed() : NonDeterministicSeed()) {}

void CUDAContext::SwitchToDevice() {
  HN_CUDA_CHECK(cudaSetDevice(device_id_));
  current_stream = CurrentStream{device_id_, stream()};
}

cudaStream_t CurrentCudaStream(int device) {
  return current_stream.device == device ? current_stream.stream : nullptr;
}

cudaStream_t CUDAContext::stream() const {
  auto& s = Objects().streams[{device_id_, stream_id_}];
  if (!s) {
    CUDADeviceGuard g(device_id_);
    HN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  return s;
}

cublasHandle_t CUDAContext::cublas_handle() const {
  cudaStream_t s = stream();
  auto& h = Objects().cublas[s];
  if (!h) {
    CUDADeviceGuard g(device_id_);
    HN_CUBLAS_CHECK(cublasCreate(&h));
    HN_CUBLAS_CHECK(cublasSetStream(h, s));
    HN_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  }
  return h;
}

void CUDAContext::FinishDeviceComputation() {
  HN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  HN_CUDA_CHECK(cudaGetLastError());
}

namespace {
thread_local int capturing_graph = 0;

bool IsHostMemory(const void* p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return a.type == cudaMemoryTypeHost || a.type == cudaMemoryTypeUnregistered;
}
}  // namespace

ScopedCudaGraphCapture::ScopedCudaGraphCapture() { ++capturing_graph; }
ScopedCudaGraphCapture::~ScopedCudaGraphCapture() { --capturing_graph; }

void CUDAContext::CopyBytes(size_t nbytes, const void* src, Device, void* dst, Device) {
  if (nbytes == 0) return;
  HN_CHECK_KIND(kUnsupported, !capturing_graph || (!IsHostMemory(src) && !IsHostMemory(dst)),
                "a copy of host memory cannot be captured into a CUDA graph (a replay would read the "
                "host buffer's address again)");
  // Unified addressing: the runtime infers the direction (and uses peer access between GPUs).
  HN_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream()));
}

Allocator* CUDAContext::allocator() { return GetDeviceBackend(device())->DeviceAllocator(device_id_); }

}  // namespace hetnet
