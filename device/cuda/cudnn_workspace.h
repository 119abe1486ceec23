// Shared cuDNN scratch memory: ONE grow-only workspace per (device, stream), shared by every cuDNN
// operator that runs on that stream (never one per operator), as Caffe2 did.
// - Users are serialized by a mutex held while they enqueue work; work on one stream runs in order,
//   so the next user (same stream) cannot overlap the previous one's kernels.
// - Growth frees the old buffer with cudaFree, which waits for the device, so no queued kernel can
//   still be reading it.
// - Requests are capped: an operator asks for at most its `ws_nbytes_limit` (default 64 MiB) and
//   never more than the global cap (SetCudnnWorkspaceGlobalCap, default 1 GiB; env
//   HETNET_CUDNN_WS_CAP_MB). Algorithm choice only considers algorithms that fit.
// This header has no CUDA includes (the stream is a void*), so benchmarks and tests can read the
// statistics without the CUDA toolkit's headers. Built only with cuDNN (HETNET_WITH_CUDNN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

namespace hetnet {

constexpr size_t kCudnnDefaultWsLimit = 64u << 20;  // Caffe2's ws_nbytes_limit default

class CudnnWorkspace {
 public:
  // The workspace for (device, stream); created on first use and kept for the process.
  static CudnnWorkspace& Get(int device, void* stream);
  // Runs f(ptr, nbytes) holding the workspace with at least `nbytes` (grown on demand; ptr may be
  // nullptr when nbytes == 0). `user` identifies the caller for the per-operator statistics
  // (nullptr: not counted, e.g. the one-off scratch of an exhaustive algorithm search).
  void Run(const void* user, size_t nbytes, const std::function<void(void*, size_t)>& f);
  size_t capacity() const;
  void Release();  // frees the buffer (waits for the device); the next Run allocates again

 private:
  CudnnWorkspace(int device) : device_(device) {}
  int device_;
  mutable std::mutex mu_;
  void* ptr_ = nullptr;
  size_t capacity_ = 0;
};

// Counts every growth or release of any shared workspace buffer (its address changes): a captured
// CUDA graph (device/cuda/cuda_graph_net.cc) that baked in the old address must be captured again.
uint64_t CudnnWorkspaceGeneration();

// The most bytes any request may get (the op's limit is min(ws_nbytes_limit, global cap)).
size_t CudnnWorkspaceGlobalCap();
void SetCudnnWorkspaceGlobalCap(size_t bytes);

struct CudnnWorkspaceStats {
  size_t shared_bytes = 0;      // sum of the capacities of all shared workspaces (one per device/stream)
  size_t per_op_sum_bytes = 0;  // what one workspace per operator would hold: sum over users of their largest request
  size_t largest_request = 0;
  int users = 0;                // distinct operators that used a workspace
  int workspaces = 0;
};
CudnnWorkspaceStats GetCudnnWorkspaceStats();
// Forgets users and releases every workspace's buffer, so tests and benchmarks measure from zero.
// Only while no cuDNN operator runs.
void ResetCudnnWorkspaceStats();

}  // namespace hetnet
