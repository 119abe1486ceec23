#include "device/cuda/cudnn_context.h"

#include <map>

namespace hetnet {

namespace {
struct ThreadCudnnHandles {
  std::map<cudaStream_t, cudnnHandle_t> handles;
  ~ThreadCudnnHandles() {
    for (auto& kv : handles) cudnnDestroy(kv.second);
  }
};
}  // namespace

cudnnHandle_t CudnnHandle(const CUDAContext& ctx) {
  thread_local ThreadCudnnHandles t;
  cudaStream_t s = ctx.stream();
  auto& h = t.handles[s];
  if (!h) {
    CUDADeviceGuard g(ctx.device_id());
    HN_CUDNN_CHECK(cudnnCreate(&h));
    HN_CUDNN_CHECK(cudnnSetStream(h, s));
  }
  return h;
}

}  // namespace hetnet
