// CPU context, the 64-byte aligned CPU allocator, and the CPU device backend.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

#include <pthread.h>

#include <sys/mman.h>

#include "core/context.h"
#include "core/seed.h"
#include "core/error.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

namespace {
constexpr size_t kAlignment = 64;               // a cache line, and AVX-512's vector width
constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's transparent huge page

// Freed blocks of a huge page or more, kept for the next request of the same size (up to kCacheBytes
// in all; the oldest go back to the system first). A large result handed to its caller and freed
// there (a Predictor's output array) then comes back without a fresh mapping's page faults on
// every call (a 64 MB output: ~5 ms a run), as ONNX Runtime's arena reuses its blocks.
class LargeBlockCache {
 public:
  static LargeBlockCache& Get() {
    static LargeBlockCache* cache = [] {
      auto* c = new LargeBlockCache();  // never destroyed: blocks may be freed during exit
      // A fork copies no other thread: the lock is held across it, as the intra-op pool's is.
      pthread_atfork([] { Get().mu_.lock(); }, [] { Get().mu_.unlock(); }, [] { Get().mu_.unlock(); });
      return c;
    }();
    return *cache;
  }
  void* Take(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->first != size) continue;
      void* p = it->second;
      cached_ -= size;
      blocks_.erase(it);
      return p;
    }
    return nullptr;
  }
  void Give(size_t size, void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (size > kCacheBytes) return std::free(p);
    while (cached_ + size > kCacheBytes) {
      std::free(blocks_.front().second);
      cached_ -= blocks_.front().first;
      blocks_.pop_front();
    }
    blocks_.emplace_back(size, p);
    cached_ += size;
  }

 private:
  static constexpr size_t kCacheBytes = size_t{256} << 20;
  std::mutex mu_;
  std::deque<std::pair<size_t, void*>> blocks_;  // oldest first
  size_t cached_ = 0;
};

class AlignedCPUAllocator final : public Allocator {
 public:
  std::shared_ptr<void> Allocate(size_t nbytes) override {
    // Rounding up must not wrap (a near-SIZE_MAX request would become a 64-byte block).
    HN_CHECK_KIND(kOutOfMemory, nbytes <= SIZE_MAX - kHugePage, "out of host memory allocating ", nbytes, " bytes");
    const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded < kHugePage) {
      void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
      HN_CHECK_KIND(kOutOfMemory, p, "out of host memory allocating ", nbytes, " bytes");
      return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    }
    // Blocks of a huge page or more start on a huge-page boundary and ask for transparent huge
    // pages over their whole huge pages (Linux gives them only on request in its default
    // "madvise" mode): one TLB entry per 2 MiB instead of 512 for the large activations that
    // elementwise ops and convolutions stream through.
    const size_t size = (rounded + kHugePage - 1) / kHugePage * kHugePage;
    void* p = LargeBlockCache::Get().Take(size);
    if (!p) {
      p = std::aligned_alloc(kHugePage, size);
      HN_CHECK_KIND(kOutOfMemory, p, "out of host memory allocating ", nbytes, " bytes");
#if defined(MADV_HUGEPAGE)
      madvise(p, rounded / kHugePage * kHugePage, MADV_HUGEPAGE);  // a hint: failure changes nothing
#endif
    }
    return std::shared_ptr<void>(p, [size](void* q) { LargeBlockCache::Get().Give(size, q); });
  }
};

class CPUBackend final : public DeviceBackend {
 public:
  int DeviceCount() const override { return 1; }
  Allocator* DeviceAllocator(int) override { return GetCPUAllocator(); }
  void CopyBytesSync(size_t n, const void* src, Device, void* dst, Device) override { std::memcpy(dst, src, n); }
  void SynchronizeDevice(int) override {}
};

struct RegisterCPU {
  RegisterCPU() {
    static CPUBackend backend;
    RegisterDeviceBackend(DeviceType::CPU, &backend);
  }
} register_cpu;
}  // namespace

Allocator* GetCPUAllocator() {
  static AlignedCPUAllocator alloc;
  return &alloc;
}

uint32_t NonDeterministicSeed() {
  static std::atomic<uint64_t> state{(static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()};
  uint64_t z = state.fetch_add(0x9E3779B97F4A7C15ull, std::memory_order_relaxed) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

CPUContext::CPUContext() : rng_(NonDeterministicSeed()) {}

CPUContext::CPUContext(const caffe2::DeviceOption& opt)
    : rng_(opt.has_random_seed() ? opt.random_seed() : NonDeterministicSeed()) {}

void CPUContext::CopyBytes(size_t nbytes, const void* src, Device src_dev, void* dst, Device dst_dev) {
  if (src_dev.is_cpu() && dst_dev.is_cpu()) {
    if (nbytes) std::memcpy(dst, src, nbytes);
  } else {
    hetnet::CopyBytesSync(nbytes, src, src_dev, dst, dst_dev);
  }
}

Allocator* CPUContext::allocator() { return GetCPUAllocator(); }

}  // namespace hetnet
