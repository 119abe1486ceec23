// CUDA device backend: device count (0 without driver or GPU), a caching device allocator per
// GPU, a caching pinned-host allocator, and blocking copies.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "device/cuda/cuda_context.h"
#include "core/device_events.h"

namespace hetnet {

namespace {

size_t RoundSize(size_t n) {
  constexpr size_t kSmall = 512, kLarge = 2 << 20;
  if (n <= (1 << 20)) return (n + kSmall - 1) / kSmall * kSmall + (n == 0 ? kSmall : 0);
  return (n + kLarge - 1) / kLarge * kLarge;
}

// Keeps freed blocks by rounded size and hands them out again. Device blocks are stream-aware:
// at free, an event is recorded on the freeing thread's current stream (the stream of the op that
// dropped the block; executors order it after every earlier use of the blob). A block goes to a
// request from another stream only once that event has completed; the same stream may take it at
// once (stream order). A block freed outside any operator (no current stream) is free at once:
// every executor's Run returns only after its device work finished. Pinned host blocks are not
// stream-aware: their users are released only after the copies reading or writing them finished
// (copy ops wait for their staging buffers; CPU tensors that copies read are rewritten or freed
// only after the executors waited for those copies).
std::atomic<uint64_t> g_device_allocations{0};

class CachingAllocator : public Allocator {
 public:
  CachingAllocator(int device, bool pinned) : device_(device), pinned_(pinned) {}

  std::shared_ptr<void> Allocate(size_t nbytes) override {
    // Rounding up must not wrap: no device has half the address space.
    HN_CHECK_KIND(kOutOfMemory, nbytes <= (SIZE_MAX >> 1), "out of ", pinned_ ? "pinned host" : "GPU",
                  " memory allocating ", nbytes, " bytes");
    const size_t size = RoundSize(nbytes);
    if (!pinned_) g_device_allocations.fetch_add(1, std::memory_order_relaxed);
    cudaStream_t stream = pinned_ ? nullptr : CurrentCudaStream(device_);
    void* p = TakeCached(size, stream, false);
    if (!p) p = Fresh(size, nbytes);
    return std::shared_ptr<void>(p, [this, size](void* q) { Release(q, size); });
  }

 private:
  struct FreeBlock {
    void* ptr = nullptr;
    cudaStream_t stream = nullptr;  // freed on; nullptr: no pending use
    cudaEvent_t ready = nullptr;    // recorded on `stream` at free
  };

  // A cached block `stream` may use now; with wait, blocks on the oldest pending one instead.
  void* TakeCached(size_t size, cudaStream_t stream, bool wait) {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it == free_.end()) return nullptr;
    auto& blocks = it->second;
    for (size_t k = blocks.size(); k-- > 0;) {
      FreeBlock& b = blocks[k];
      bool usable = !b.ready || (stream && b.stream == stream);
      if (!usable && cudaEventQuery(b.ready) == cudaSuccess) usable = true;
      if (usable) return Take(&blocks, k);
    }
    if (wait && !blocks.empty()) {
      FreeBlock& b = blocks.front();
      cudaEventSynchronize(b.ready);
      return Take(&blocks, 0);
    }
    return nullptr;
  }

  void* Take(std::vector<FreeBlock>* blocks, size_t k) {
    FreeBlock b = (*blocks)[k];
    blocks->erase(blocks->begin() + static_cast<std::ptrdiff_t>(k));
    if (b.ready) spare_events_.push_back(b.ready);
    return b.ptr;
  }

  // The deleter: never throws (it may run during teardown, when CUDA calls fail).
  void Release(void* q, size_t size) {
    FreeBlock b{q, pinned_ ? nullptr : CurrentCudaStream(device_), nullptr};
    std::lock_guard<std::mutex> lock(mu_);
    if (b.stream) {
      if (!spare_events_.empty()) {
        b.ready = spare_events_.back();
        spare_events_.pop_back();
      } else {
        CUDADeviceGuard g(device_);
        if (cudaEventCreateWithFlags(&b.ready, cudaEventDisableTiming) != cudaSuccess) b.ready = nullptr;
      }
      if (b.ready && cudaEventRecord(b.ready, b.stream) != cudaSuccess) {
        cudaStreamSynchronize(b.stream);  // cannot track it: make the block free now
        spare_events_.push_back(b.ready);
        b.ready = nullptr;
      }
      if (!b.ready) b.stream = nullptr;
      (void)cudaGetLastError();
    }
    free_[size].push_back(b);
  }

  cudaError_t Raw(void** p, size_t size) {
    if (pinned_) return cudaHostAlloc(p, size, cudaHostAllocPortable);
    CUDADeviceGuard g(device_);
    return cudaMalloc(p, size);
  }
  void ReleaseCached() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& kv : free_)
      for (auto& b : kv.second) {
        if (b.ready) cudaEventSynchronize(b.ready), spare_events_.push_back(b.ready);
        pinned_ ? cudaFreeHost(b.ptr) : cudaFree(b.ptr);
      }
    free_.clear();
  }
  void* Fresh(size_t size, size_t asked) {
    void* p = nullptr;
    cudaError_t err = Raw(&p, size);
    if (err == cudaErrorMemoryAllocation) {  // wait for a pending block of this size, else free the cache
      (void)cudaGetLastError();
      if ((p = TakeCached(size, nullptr, true))) return p;
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
  std::map<size_t, std::vector<FreeBlock>> free_;
  std::vector<cudaEvent_t> spare_events_;  // recycled: creating an event per free would cost more
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
    // cudaMemcpy may return before a pageable host-to-device copy (and any device-to-device one)
    // has landed, and the legacy default stream it runs on does not order the non-blocking streams
    // operators run on: wait for that stream, so that a blocking copy has finished when it returns.
    // (On an H200 under a parallel ctest, kernels read fed inputs before their copies landed:
    // gradient checks saw half derivatives, EnsureCPUOutput uninitialized memory.)
    HN_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDefault));
    HN_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  void SynchronizeDevice(int id) override {
    CUDADeviceGuard g(id);
    HN_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  std::mutex mu_;
  std::map<int, std::unique_ptr<CachingAllocator>> allocators_;
};

// Streams and events for the executors and the profiler (compiled without CUDA headers).
class CUDADeviceEvents final : public DeviceEvents {
 public:
  StreamHandle CurrentStream(DeviceContext* ctx) override {
    auto* cuda = dynamic_cast<CUDAContext*>(ctx);
    HN_ENFORCE(cuda, "not a CUDA context (", ctx->device().str(), ")");
    return cuda->stream();
  }
  EventHandle CreateEvent(int device, bool timing) override {
    CUDADeviceGuard g(device);
    cudaEvent_t e = nullptr;
    HN_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    return e;
  }
  void DestroyEvent(int device, EventHandle e) override {
    CUDADeviceGuard g(device);
    cudaEventDestroy(static_cast<cudaEvent_t>(e));
  }
  void Record(EventHandle e, StreamHandle s, int device) override {
    CUDADeviceGuard g(device);  // an event is recorded on a stream of the device it was created on
    HN_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(s)));
  }
  void RecordNow(EventHandle e, int device) override {
    cudaStream_t idle = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& s = idle_streams_[device];
      if (!s) {
        CUDADeviceGuard g(device);
        HN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      }
      idle = s;
    }
    Record(e, idle, device);
  }
  void StreamWait(StreamHandle s, EventHandle e) override {
    HN_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(s), static_cast<cudaEvent_t>(e), 0));
  }
  void HostWait(EventHandle e) override { HN_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(e))); }
  bool Query(EventHandle e) override {
    const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (r == cudaErrorNotReady) return false;
    HN_CUDA_CHECK(r);
    return true;
  }
  float ElapsedMs(EventHandle from, EventHandle to) override {
    float ms = 0;
    HN_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(from), static_cast<cudaEvent_t>(to)));
    return ms;
  }

 private:
  std::mutex mu_;
  std::map<int, cudaStream_t> idle_streams_;  // nothing else is queued there, so events complete at once
};

struct RegisterCUDA {
  RegisterCUDA() {
    // Leaked on purpose: tensors freed during static destruction still return blocks here.
    RegisterDeviceBackend(DeviceType::CUDA, new CUDABackend);
    RegisterDeviceEvents(new CUDADeviceEvents);
  }
} register_cuda;

}  // namespace

uint64_t CudaDeviceAllocations() { return g_device_allocations.load(std::memory_order_relaxed); }

Allocator* GetPinnedHostAllocator() {
  static auto* alloc = new CachingAllocator(0, true);  // leaked on purpose, as above
  return alloc;
}

}  // namespace hetnet
