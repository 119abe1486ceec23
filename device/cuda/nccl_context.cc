// Run on one GPU only (H100, 2026-11-27); see nccl_context.h.
#include "device/cuda/nccl_context.h"

#include <exception>
#include <map>
#include <set>

namespace hetnet {

void ThrowNcclError(ncclResult_t result, const std::string& what, ncclComm_t comm) {
  const bool outside = result == ncclSystemError || result == ncclRemoteError;
  const char* last = ncclGetLastError(comm);
  Throw(outside ? ErrorKind::kIo : ErrorKind::kRuntime,
        MakeString("NCCL error ", static_cast<int>(result), " (", ncclGetErrorString(result), ") in ", what,
                   last && *last ? MakeString(": ", last) : std::string()));
}

ncclDataType_t NcclDataType(DataType t, const std::string& who) {
  switch (t) {
    case DataType::Float: return ncclFloat32;
    case DataType::Float16: return ncclFloat16;
    default:
      HN_THROW(kUnsupported, who, " does not support dtype ", DataTypeName(t),
               " (NCCL operators take float32 and float16)");
  }
}

std::string DeviceListString(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "" : ", ") + Device::CUDA(d).str();
  return s;
}

FenceEvent::~FenceEvent() {
  if (!event_) return;
  int cur = -1;
  cudaGetDevice(&cur);
  cudaSetDevice(device_);
  cudaEventDestroy(event_);
  if (cur >= 0) cudaSetDevice(cur);
  (void)cudaGetLastError();
}

void FenceEvent::Record(cudaStream_t stream, int device) {
  CUDADeviceGuard g(device);  // an event is recorded on a stream of the device it was created on
  if (event_ && device_ != device) {
    HN_CUDA_CHECK(cudaEventDestroy(event_));
    event_ = nullptr;
  }
  if (!event_) {
    HN_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    device_ = device;
  }
  HN_CUDA_CHECK(cudaEventRecord(event_, stream));
}

void FenceEvent::MakeWait(cudaStream_t waiter) const { HN_CUDA_CHECK(cudaStreamWaitEvent(waiter, event_, 0)); }

namespace {
// weak_ptr: the ops own the communicators; the cache only lets ops over one device list share them.
// Leaked on purpose: ops destroyed during static destruction still look it up.
std::mutex& CacheMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::map<std::vector<int>, std::weak_ptr<NCCLCommunicators>>& Cache() {
  static auto* m = new std::map<std::vector<int>, std::weak_ptr<NCCLCommunicators>>;
  return *m;
}
}  // namespace

std::shared_ptr<NCCLCommunicators> NCCLCommunicators::Get(const std::vector<int>& devices) {
  std::lock_guard<std::mutex> lock(CacheMutex());
  auto& slot = Cache()[devices];
  if (auto live = slot.lock()) return live;
  std::shared_ptr<NCCLCommunicators> made(new NCCLCommunicators(devices));
  slot = made;
  return made;
}

NCCLCommunicators::NCCLCommunicators(std::vector<int> devices) : devices_(std::move(devices)) {
  const int n = static_cast<int>(devices_.size());
  HN_ENFORCE(n >= 1, "NCCL communicators need at least one GPU");
  const int have = NumCudaDevices();
  std::set<int> seen;
  for (int d : devices_) {
    HN_CHECK_KIND(kUnsupported, d >= 0 && d < have, "NCCL: ", Device::CUDA(d).str(),
                  " does not exist: this machine has ", have, " CUDA device(s)");
    // NCCL's own refusal is "Duplicate GPU detected", after setting up half a communicator.
    HN_ENFORCE(seen.insert(d).second, "NCCL needs one tensor per GPU, but ", Device::CUDA(d).str(),
               " appears twice in [", DeviceListString(devices_), "]");
  }
  comms_.assign(n, nullptr);
  streams_.assign(n, nullptr);
  for (int i = 0; i < n; ++i) done_.push_back(std::make_unique<FenceEvent>());
  try {
    HN_NCCL_CHECK(ncclCommInitAll(comms_.data(), n, devices_.data()));
    for (int i = 0; i < n; ++i) {
      CUDADeviceGuard g(devices_[i]);
      int least = 0, greatest = 0;
      HN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      // Highest priority, as Caffe2: a collective holds up every peer GPU until it runs.
      HN_CUDA_CHECK(cudaStreamCreateWithPriority(&streams_[i], cudaStreamNonBlocking, greatest));
    }
  } catch (Error& e) {
    Release();  // the destructor does not run for a constructor that throws
    throw e.AddContext(MakeString("creating NCCL communicators over [", DeviceListString(devices_), "]"));
  }
}

NCCLCommunicators::~NCCLCommunicators() { Release(); }

void NCCLCommunicators::Release() {
  // Never throws: it may run during teardown. Work still queued on our streams finishes first.
  int cur = -1;
  cudaGetDevice(&cur);
  for (size_t i = 0; i < devices_.size(); ++i) {
    cudaSetDevice(devices_[i]);
    if (i < streams_.size() && streams_[i]) cudaStreamSynchronize(streams_[i]);
    if (i < comms_.size() && comms_[i]) ncclCommDestroy(comms_[i]);
    if (i < streams_.size() && streams_[i]) cudaStreamDestroy(streams_[i]);
  }
  if (cur >= 0) cudaSetDevice(cur);
  comms_.clear();
  streams_.clear();
  done_.clear();
  in_.clear();
  (void)cudaGetLastError();
}

void NCCLCommunicators::Run(const std::vector<StreamFence>& fences, const Launch& launch) {
  static std::mutex launch_order;  // see the header: one launch order across communicators
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = devices_.size();
  while (in_.size() < fences.size()) in_.push_back(std::make_unique<FenceEvent>());
  for (size_t k = 0; k < fences.size(); ++k) {
    in_[k]->Record(fences[k].stream, fences[k].device);
    for (size_t i = 0; i < n; ++i) in_[k]->MakeWait(streams_[i]);
  }
  {
    std::lock_guard<std::mutex> order(launch_order);
    // A group left open would swallow every later NCCL call of this thread: always close it, then
    // report the first failure.
    HN_NCCL_CHECK(ncclGroupStart());
    std::exception_ptr failed;
    for (size_t i = 0; i < n && !failed; ++i) {
      try {
        CUDADeviceGuard g(devices_[i]);
        launch(i, comms_[i], streams_[i]);
      } catch (...) {
        failed = std::current_exception();
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    if (failed) std::rethrow_exception(failed);
    if (end != ncclSuccess) ThrowNcclError(end, MakeString("ncclGroupEnd over [", DeviceListString(devices_), "]"));
  }
  for (size_t i = 0; i < n; ++i) {
    done_[i]->Record(streams_[i], devices_[i]);
    for (const auto& f : fences) done_[i]->MakeWait(f.stream);
  }
}

}  // namespace hetnet
