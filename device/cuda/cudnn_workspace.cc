#include "device/cuda/cudnn_workspace.h"

#include <atomic>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "core/error.h"
#include "device/cuda/cuda_context.h"

namespace hetnet {

namespace {
struct Registry {
  std::mutex mu;
  std::map<std::pair<int, void*>, std::unique_ptr<CudnnWorkspace>> spaces;
  std::map<const void*, size_t> user_max;  // largest request per operator
  size_t cap = 0;
};
Registry& Reg() {
  static Registry* r = [] {
    auto* x = new Registry;  // leaked: workspaces outlive static destruction order issues
    const char* env = std::getenv("HETNET_CUDNN_WS_CAP_MB");
    x->cap = env ? static_cast<size_t>(std::atoll(env)) << 20 : (size_t{1} << 30);
    return x;
  }();
  return *r;
}
}  // namespace

CudnnWorkspace& CudnnWorkspace::Get(int device, void* stream) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  auto& p = r.spaces[{device, stream}];
  if (!p) p.reset(new CudnnWorkspace(device));
  return *p;
}

namespace {
std::atomic<uint64_t> g_generation{0};
}  // namespace

uint64_t CudnnWorkspaceGeneration() { return g_generation.load(); }

void CudnnWorkspace::Run(const void* user, size_t nbytes, const std::function<void(void*, size_t)>& f) {
  if (user) {
    Registry& r = Reg();
    std::lock_guard<std::mutex> g(r.mu);
    size_t& m = r.user_max[user];
    m = std::max(m, nbytes);
  }
  std::lock_guard<std::mutex> g(mu_);
  if (nbytes > capacity_) {
    CUDADeviceGuard dg(device_);
    if (ptr_) HN_CUDA_CHECK(cudaFree(ptr_));  // waits for queued work that may read the old buffer
    ptr_ = nullptr;
    ++g_generation;
    capacity_ = 0;
    if (cudaMalloc(&ptr_, nbytes) != cudaSuccess) {
      (void)cudaGetLastError();
      ptr_ = nullptr;
      HN_THROW(kOutOfMemory, "cuDNN workspace: cannot allocate ", nbytes, " bytes on CUDA device ", device_,
               " (lower ws_nbytes_limit or HETNET_CUDNN_WS_CAP_MB)");
    }
    capacity_ = nbytes;
  }
  f(nbytes ? ptr_ : nullptr, nbytes);
}

void CudnnWorkspace::Release() {
  std::lock_guard<std::mutex> g(mu_);
  CUDADeviceGuard dg(device_);
  if (ptr_) HN_CUDA_CHECK(cudaFree(ptr_));
  ptr_ = nullptr;
  capacity_ = 0;
  ++g_generation;
}

size_t CudnnWorkspace::capacity() const {
  std::lock_guard<std::mutex> g(mu_);
  return capacity_;
}

size_t CudnnWorkspaceGlobalCap() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  return r.cap;
}
void SetCudnnWorkspaceGlobalCap(size_t bytes) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  r.cap = bytes;
}

CudnnWorkspaceStats GetCudnnWorkspaceStats() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  CudnnWorkspaceStats s;
  for (const auto& kv : r.spaces) {
    s.shared_bytes += kv.second->capacity();
    ++s.workspaces;
  }
  for (const auto& kv : r.user_max) {
    s.per_op_sum_bytes += kv.second;
    s.largest_request = std::max(s.largest_request, kv.second);
    ++s.users;
  }
  return s;
}

void ResetCudnnWorkspaceStats() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  r.user_max.clear();
  for (auto& kv : r.spaces) kv.second->Release();
}

}  // namespace hetnet
