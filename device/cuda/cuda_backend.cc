// CUDA device backend: device count (0 without driver or GPU), a caching device allocator per
// GPU, a caching pinned-host allocator, and blocking copies.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "device/cuda/cuda_context.h"

namespace hetnet {

namespace {

size_t RoundSize(size_t n) {
  constexpr size_t kSmall = 512, kLarge = 2 << 20;
  if (n <= (1 << 20)) return (n + kSmall - 1) / kSmall * kSmall + (n == 0 ? kSmall : 0);
  return (n + kLarge - 1) / kLarge * kLarge;
}

// Keeps freed blocks by rounded size and hands them out again. Not stream-aware yet: blocks are
// reused in stream order within one stream, which is what the sequential executor produces.
class CachingAllocator : public Allocator {
 public:
  using RawAlloc = cudaError_t (*)(void**, size_t, int);
  using RawFree = cudaError_t (*)(void*);
  CachingAllocator(int device, bool pinned) : device_(device), pinned_(pinned) {}

  std::shared_ptr<void> Allocate(size_t nbytes) override {
    const size_t size = RoundSize(nbytes);
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
      }
    }
    if (!p) p = Fresh(size, nbytes);
    return std::shared_ptr<void>(p, [this, size](void* q) {
      std::lock_guard<std::mutex> lock(mu_);
      free_[size].push_back(q);
    });
  }

 private:
  cudaError_t Raw(void** p, size_t size) {
    if (pinned_) return cudaHostAlloc(p, size, cudaHostAllocPortable);
    CUDADeviceGuard g(device_);
    return cudaMalloc(p, size);
  }
  void ReleaseCached() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& kv : free_)
      for (void* q : kv.second) pinned_ ? cudaFreeHost(q) : cudaFree(q);
    free_.clear();
  }
  void* Fresh(size_t size, size_t asked) {
    void* p = nullptr;
    cudaError_t err = Raw(&p, size);
    if (err == cudaErrorMemoryAllocation) {  // give cached blocks back and try once more
      (void)cudaGetLastError();
      ReleaseCached();
      err = Raw(&p, size);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      if (!pinned_) cudaMemGetInfo(&free_b, &total_b);
      HN_THROW(kOutOfMemory, "out of ", pinned_ ? "pinned host" : "GPU", " memory allocating ", asked,
               " bytes", pinned_ ? "" : MakeString(" on cuda:", device_, " (", free_b >> 20, " MiB free of ",
                                                   total_b >> 20, " MiB)"));
    }
    HN_CUDA_CHECK(err);
    return p;
  }

  int device_;
  bool pinned_;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
};

class CUDABackend final : public DeviceBackend {
 public:
  int DeviceCount() const override {
    static const int count = [] {
      int n = 0;
      // No driver (cudaErrorInsufficientDriver) or no device means zero GPUs, not an error.
      if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
      }
      return n;
    }();
    return count;
  }
  Allocator* DeviceAllocator(int id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& a = allocators_[id];
    if (!a) a = std::make_unique<CachingAllocator>(id, false);
    return a.get();
  }
  Allocator* PinnedHostAllocator() override { return GetPinnedHostAllocator(); }
  void CopyBytesSync(size_t n, const void* src, Device src_dev, void* dst, Device dst_dev) override {
    const int dev = src_dev.is_cpu() ? dst_dev.id : src_dev.id;
    CUDADeviceGuard g(dev);
    HN_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDefault));
  }
  void SynchronizeDevice(int id) override {
    CUDADeviceGuard g(id);
    HN_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  std::mutex mu_;
  std::map<int, std::unique_ptr<CachingAllocator>> allocators_;
};

struct RegisterCUDA {
  RegisterCUDA() {
    // Leaked on purpose: tensors freed during static destruction still return blocks here.
    RegisterDeviceBackend(DeviceType::CUDA, new CUDABackend);
  }
} register_cuda;

}  // namespace

Allocator* GetPinnedHostAllocator() {
  static auto* alloc = new CachingAllocator(0, true);  // leaked on purpose, as above
  return alloc;
}

}  // namespace hetnet
