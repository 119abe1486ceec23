// CUDA copies: host to device (one DMA from page-locked sources, else staged through two pinned
// buffers), device to host (into page-locked memory), and between GPUs. Measured: benchmarks/RESULTS.md.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>

#include "device/cuda/cuda_context.h"
#include "operators/copy_op.h"

namespace hetnet {

namespace {

bool IsPinnedHost(const void* p) {
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

void CheckCopyable(const Tensor& X, const std::string& name) {
  HN_CHECK_KIND(kUnsupported, X.dtype() != DataType::String, "input '", name,
                "' is a string tensor; string tensors stay on CPU");
}

// An executor may give a copy its own stream (argument "stream_id", default 0: the compute stream)
// so copies overlap compute; see net_executors/op_creation.h. Every copy is bracketed by two timing
// events on its stream, read (without waiting) by copy_seconds_last_run.
class CUDACopyOpBase : public CopyOpBase<CUDAContext> {
 public:
  CUDACopyOpBase(const caffe2::OperatorDef& def, Workspace* ws) : CopyOpBase<CUDAContext>(def, ws) {
    const int stream_id = GetSingleArgument<int>("stream_id", 0);
    if (stream_id != 0) context_ = CUDAContext(context_.device_id(), stream_id);
  }
  ~CUDACopyOpBase() override {
    for (auto& e : timing_)
      if (e) cudaEventDestroy(e);
  }
  void RunOnDevice() final {
    timed_ = false;
    if (!timing_[0]) {
      HN_CUDA_CHECK(cudaEventCreate(&timing_[0]));
      HN_CUDA_CHECK(cudaEventCreate(&timing_[1]));
    }
    HN_CUDA_CHECK(cudaEventRecord(timing_[0], context_.stream()));
    Copy();
    HN_CUDA_CHECK(cudaEventRecord(timing_[1], context_.stream()));
    timed_ = true;
  }
  double copy_seconds_last_run() const override {
    if (!timed_ || cudaEventQuery(timing_[1]) != cudaSuccess) return -1;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, timing_[0], timing_[1]) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    return ms * 1e-3;
  }

 protected:
  virtual void Copy() = 0;

 private:
  cudaEvent_t timing_[2] = {nullptr, nullptr};
  bool timed_ = false;
};

class CopyCPUToGPUOp final : public CUDACopyOpBase {
 public:
  using CUDACopyOpBase::CUDACopyOpBase;
  ~CopyCPUToGPUOp() override {
    for (auto& e : done_)
      if (e) cudaEventDestroy(e);
  }

  void Copy() override {
    const Tensor& X = Input(0);
    CheckCopyable(X, def_.input(0));
    Tensor* Y = Output(0, X.shape(), X.dtype());
    const size_t n = X.nbytes();
    last_bytes_ = static_cast<int64_t>(n);
    if (n == 0) return;
    auto* dst = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
    const auto* src = static_cast<const char*>(X.raw_data());
    // From the next write on, the source lives in page-locked memory (a hint read only by its
    // writer, which runs after every reader of this run).
    const_cast<Tensor&>(X).set_pinned_host(true);
    if (X.storage_pinned() || IsPinnedHost(src)) {
      HN_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, context_.stream()));
      return;
    }
    // Pageable source: two pinned buffers, so the host memcpy of one chunk overlaps the DMA of the other.
    constexpr size_t kChunk = 8 << 20;
    const size_t chunk = std::min(n, kChunk);
    EnsureStaging(chunk);
    for (size_t off = 0, k = 0; off < n; off += chunk, ++k) {
      const size_t len = std::min(chunk, n - off);
      const int b = static_cast<int>(k & 1);
      HN_CUDA_CHECK(cudaEventSynchronize(done_[b]));  // the DMA that last read this buffer finished
      std::memcpy(staging_[b].get(), src + off, len);
      HN_CUDA_CHECK(cudaMemcpyAsync(dst + off, staging_[b].get(), len, cudaMemcpyHostToDevice, context_.stream()));
      HN_CUDA_CHECK(cudaEventRecord(done_[b], context_.stream()));
    }
  }

 private:
  void EnsureStaging(size_t chunk) {
    if (chunk <= staging_bytes_) return;
    for (auto& e : done_)
      if (e) HN_CUDA_CHECK(cudaEventSynchronize(e));
    for (int b = 0; b < 2; ++b) {
      staging_[b] = GetPinnedHostAllocator()->Allocate(chunk);
      if (!done_[b]) HN_CUDA_CHECK(cudaEventCreateWithFlags(&done_[b], cudaEventDisableTiming));
    }
    staging_bytes_ = chunk;
  }

  std::shared_ptr<void> staging_[2];
  cudaEvent_t done_[2] = {nullptr, nullptr};
  size_t staging_bytes_ = 0;
};

class CopyGPUToCPUOp final : public CUDACopyOpBase {
 public:
  using CUDACopyOpBase::CUDACopyOpBase;
  void Copy() override {
    const Tensor& X = Input(0);
    CheckCopyable(X, def_.input(0));
    Tensor* Y = Output(0);
    Y->Resize(X.shape());
    const size_t n = X.nbytes();
    last_bytes_ = static_cast<int64_t>(n);
    // Land in pinned memory so the copy is a true async DMA; keep it across runs.
    const auto& st = Y->storage();
    if (!(st && st->data.get() == pinned_ && st->capacity >= n)) {
      auto holder = GetPinnedHostAllocator()->Allocate(n);
      pinned_ = holder.get();
      Y->SetExternalData(std::move(holder), n, X.dtype(), Device::CPU());
      Y->storage()->pinned = true;
    }
    void* dst = Y->raw_mutable_data(X.dtype());
    if (n) HN_CUDA_CHECK(cudaMemcpyAsync(dst, X.raw_data(), n, cudaMemcpyDeviceToHost, context_.stream()));
    // CPU operators read the result as soon as this op returns, unless the executor orders them
    // after this op's event (the parallel executor sets sync_host=0 and keeps its worker free).
    if (sync_host_) context_.FinishDeviceComputation();
  }

 private:
  const void* pinned_ = nullptr;
  const bool sync_host_ = GetSingleArgument<int>("sync_host", 1) != 0;
};

void EnablePeerAccessOnce(int dst, int src) {
  static std::mutex mu;
  static std::set<std::pair<int, int>> done;
  std::lock_guard<std::mutex> lock(mu);
  if (!done.insert({dst, src}).second) return;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, dst, src) == cudaSuccess && can) {
    CUDADeviceGuard g(dst);
    cudaError_t e = cudaDeviceEnablePeerAccess(src, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) HN_CUDA_CHECK(e);
    (void)cudaGetLastError();
  }
}

class CUDACopyOp final : public CUDACopyOpBase {
 public:
  using CUDACopyOpBase::CUDACopyOpBase;
  ~CUDACopyOp() override {
    if (src_ready_) cudaEventDestroy(src_ready_);
  }
  void Copy() override {
    // The input may live on any GPU, so it is read without the same-device check.
    const Blob* in = InputBlob(0);
    HN_ENFORCE(in->IsTensor() && in->GetTensor().initialized(), "input 0 ('", def_.input(0), "') has no data");
    const Tensor& X = in->GetTensor();
    HN_ENFORCE(!X.device().is_cpu(), "input 0 ('", def_.input(0), "') is on CPU; Copy on ", device_.str(),
               " copies between GPUs (use CopyCPUToGPU)");
    CheckCopyable(X, def_.input(0));
    Tensor* Y = Output(0);
    last_bytes_ = static_cast<int64_t>(X.nbytes());
    if (&X == Y) return;
    Y->Resize(X.shape());
    void* dst = Y->raw_mutable_data(X.dtype());
    const size_t n = X.nbytes();
    if (n == 0) return;
    const int src_dev = X.device().id;
    if (src_dev == context_.device_id()) {
      HN_CUDA_CHECK(cudaMemcpyAsync(dst, X.raw_data(), n, cudaMemcpyDeviceToDevice, context_.stream()));
      return;
    }
    // Order after the producer's work on the source GPU's stream, then copy (peer DMA where possible).
    EnablePeerAccessOnce(context_.device_id(), src_dev);
    CUDAContext src_ctx(src_dev, 0);
    {
      CUDADeviceGuard g(src_dev);  // an event is recorded on a stream of the device it was created on
      if (!src_ready_) HN_CUDA_CHECK(cudaEventCreateWithFlags(&src_ready_, cudaEventDisableTiming));
      HN_CUDA_CHECK(cudaEventRecord(src_ready_, src_ctx.stream()));
    }
    HN_CUDA_CHECK(cudaStreamWaitEvent(context_.stream(), src_ready_, 0));
    HN_CUDA_CHECK(cudaMemcpyPeerAsync(dst, context_.device_id(), X.raw_data(), src_dev, n, context_.stream()));
  }

 private:
  cudaEvent_t src_ready_ = nullptr;
};

}  // namespace

REGISTER_CUDA_OPERATOR(CopyCPUToGPU, CopyCPUToGPUOp);
REGISTER_CUDA_OPERATOR(CopyGPUToCPU, CopyGPUToCPUOp);
REGISTER_CUDA_OPERATOR(Copy, CUDACopyOp);

}  // namespace hetnet
