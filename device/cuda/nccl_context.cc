// UNVERIFIED on a GPU (compiled without one); see nccl_context.h.
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
  done_.assign(n, nullptr);
  try {
    HN_NCCL_CHECK(ncclCommInitAll(comms_.data(), n, devices_.data()));
    for (int i = 0; i < n; ++i) {
      CUDADeviceGuard g(devices_[i]);
      int least = 0, greatest = 0;
      HN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      // Highest priority, as Caffe2: a collective holds up every peer GPU until it runs.
      HN_CUDA_CHECK(cudaStreamCreateWithPriority(&streams_[i], cudaStreamNonBlocking, greatest));
      HN_CUDA_CHECK(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming));
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
    if (i < done_.size() && done_[i]) cudaEventDestroy(done_[i]);
    if (i < streams_.size() && streams_[i]) cudaStreamDestroy(streams_[i]);
  }
  for (auto& [dev, e] : master_events_) {
    cudaSetDevice(dev);
    cudaEventDestroy(e);
  }
  if (cur >= 0) cudaSetDevice(cur);
  comms_.clear();
  streams_.clear();
  done_.clear();
  master_events_.clear();
  (void)cudaGetLastError();
}

cudaEvent_t NCCLCommunicators::MasterEvent(int device) {
  for (auto& [dev, e] : master_events_)
    if (dev == device) return e;
  cudaEvent_t e = nullptr;
  CUDADeviceGuard g(device);  // recorded on a stream of `device`, so created there
  HN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  master_events_.emplace_back(device, e);
  return e;
}

void NCCLCommunicators::Run(int op_device, cudaStream_t op_stream, const Launch& launch) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = devices_.size();
  {
    CUDADeviceGuard g(op_device);
    cudaEvent_t master = MasterEvent(op_device);
    HN_CUDA_CHECK(cudaEventRecord(master, op_stream));
    for (size_t i = 0; i < n; ++i) HN_CUDA_CHECK(cudaStreamWaitEvent(streams_[i], master, 0));
  }
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
  for (size_t i = 0; i < n; ++i) {
    {
      CUDADeviceGuard g(devices_[i]);
      HN_CUDA_CHECK(cudaEventRecord(done_[i], streams_[i]));
    }
    HN_CUDA_CHECK(cudaStreamWaitEvent(op_stream, done_[i], 0));
  }
}

}  // namespace hetnet
