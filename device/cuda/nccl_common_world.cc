// Run on one GPU only (H100, 2026-11-27); see nccl_common_world.h.
#include "device/cuda/nccl_common_world.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace hetnet {

namespace {
using Clock = std::chrono::steady_clock;

long long Ms(std::chrono::milliseconds d) { return static_cast<long long>(d.count()); }

// What a store wait may still take before `deadline` (at least 1 ms: 0 would mean "forever").
std::chrono::milliseconds Remaining(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 1 ? std::chrono::milliseconds(1) : left;
}

// "host/GPU-uuid": two ranks with the same string would share a GPU, whatever CUDA_VISIBLE_DEVICES
// made each of them call it.
std::string GpuIdentity(int device) {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "unknown-host");
  cudaDeviceProp prop;
  HN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::string uuid;
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(prop.uuid.bytes[i]));
    uuid += hex;
  }
  return MakeString(host, "/GPU-", uuid);
}
}  // namespace

std::shared_ptr<NCCLCommonWorld> NCCLCommonWorld::Create(const NcclWorldOptions& opts, const StoreHandlerPtr& store) {
  HN_ENFORCE(store, "NCCL common world '", opts.name, "' needs a store handler to rendezvous through");
  HN_ENFORCE(opts.size >= 1 && opts.rank >= 0 && opts.rank < opts.size, "NCCL common world '", opts.name,
             "': rank must satisfy 0 <= rank < size, got rank ", opts.rank, " and size ", opts.size);
  HN_ENFORCE(opts.timeout.count() > 0, "NCCL common world '", opts.name, "': the timeout must be positive");
  GetDeviceBackend(Device::CUDA(opts.device));  // kUnsupported naming the device when it does not exist
  std::shared_ptr<NCCLCommonWorld> w(new NCCLCommonWorld(opts));
  w->Rendezvous(store);
  w->watchdog_ = std::thread([raw = w.get()] { raw->Watch(); });
  return w;
}

NCCLCommonWorld::~NCCLCommonWorld() {
  try {
    Close();
  } catch (...) {  // a destructor never throws; Close already aborted what it could not finish
  }
}

std::string NCCLCommonWorld::Describe() const {
  return MakeString("NCCL common world '", opts_.name, "' rank ", opts_.rank, " of ", opts_.size, " on ",
                    Device::CUDA(opts_.device).str());
}

void NCCLCommonWorld::Rendezvous(const StoreHandlerPtr& store) {
  const auto deadline = Clock::now() + opts_.timeout;
  const std::string prefix = opts_.name + "/nccl/";
  CUDADeviceGuard guard(opts_.device);
  // Every rank's GPU first: a shared GPU is refused here, by every rank, with a clear message.
  store->Set(prefix + "gpu_" + std::to_string(opts_.rank), GpuIdentity(opts_.device));
  std::vector<std::string> gpus(opts_.size);
  for (int r = 0; r < opts_.size; ++r) gpus[r] = store->Get(prefix + "gpu_" + std::to_string(r), Remaining(deadline));
  for (int a = 0; a < opts_.size; ++a)
    for (int b = a + 1; b < opts_.size; ++b)
      HN_ENFORCE(gpus[a] != gpus[b], Describe(), ": ranks ", a, " and ", b, " are on the same GPU (", gpus[a],
                 "); NCCL needs one GPU per rank (it would fail with \"Duplicate GPU detected\"). Give each rank "
                 "its own device_option.device_id, or use engine GLOO for ranks that share a GPU");
  ncclUniqueId id;
  const std::string id_key = prefix + "unique_id";
  if (opts_.rank == 0) {
    HN_NCCL_CHECK(ncclGetUniqueId(&id));
    store->Set(id_key, std::string(id.internal, sizeof(id.internal)));
  } else {
    const std::string got = store->Get(id_key, Remaining(deadline));
    HN_CHECK_KIND(kIo, got.size() == sizeof(id.internal), Describe(), ": the ncclUniqueId in the store has ",
                  got.size(), " bytes, not ", sizeof(id.internal));
    std::memcpy(id.internal, got.data(), sizeof(id.internal));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every NCCL call returns at once; AwaitProgress bounds the wait
  config.commName = opts_.name.c_str();
  std::unique_lock<std::mutex> lock(mu_);
  const ncclResult_t r = ncclCommInitRankConfig(&comm_, opts_.size, id, opts_.rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    ThrowNcclError(r, Describe() + ": ncclCommInitRankConfig");
  }
  AwaitProgress("communicator setup (did every rank join?)", deadline);
}

void NCCLCommonWorld::AwaitProgress(const std::string& what, Clock::time_point deadline) {
  for (int spins = 0;; ++spins) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) state = r;
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      const bool outside = state == ncclSystemError || state == ncclRemoteError;
      Break(outside ? ErrorKind::kIo : ErrorKind::kRuntime,
            MakeString(what, " failed: NCCL error ", static_cast<int>(state), " (", ncclGetErrorString(state), ")",
                       ncclGetLastError(comm_) ? MakeString(": ", ncclGetLastError(comm_)) : std::string()));
    }
    if (Clock::now() > deadline)
      Break(ErrorKind::kTimeout, MakeString(what, " did not finish within ", Ms(opts_.timeout), " ms"));
    if (spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void NCCLCommonWorld::Break(ErrorKind kind, const std::string& why) {
  if (broken_.empty()) {
    broken_kind_ = kind;
    broken_ = MakeString(Describe(), ": ", why, "; the communicator was aborted and this world is unusable");
  }
  if (comm_) ncclCommAbort(comm_);  // releases GPU work stuck on a peer, so streams drain
  comm_ = nullptr;
  for (auto& p : pending_) cudaEventDestroy(p.done);
  pending_.clear();
  completed_ = issued_;
  cv_.notify_all();
  Throw(broken_kind_, broken_);
}

void NCCLCommonWorld::ThrowIfBroken() const {
  if (!broken_.empty()) Throw(broken_kind_, broken_);
  HN_CHECK_KIND(kIo, comm_, Describe(), " was closed");
}

void NCCLCommonWorld::Run(const std::string& what, cudaStream_t stream,
                          const std::function<void(ncclComm_t)>& launch) {
  std::unique_lock<std::mutex> lock(mu_);
  ThrowIfBroken();
  const auto deadline = Clock::now() + opts_.timeout;
  CUDADeviceGuard guard(opts_.device);
  HN_NCCL_CHECK(ncclGroupStart());
  std::exception_ptr failed;
  try {
    launch(comm_);
  } catch (...) {
    failed = std::current_exception();
  }
  const ncclResult_t end = ncclGroupEnd();  // always closed, or it would swallow later calls
  if (failed) std::rethrow_exception(failed);
  if (end != ncclSuccess && end != ncclInProgress) {
    try {
      ThrowNcclError(end, MakeString(Describe(), ": ", what), comm_);
    } catch (const Error& e) {
      Break(e.kind(), e.message());
    }
  }
  AwaitProgress(what, deadline);
  // Follow the collective on the GPU: the watchdog aborts it past the deadline.
  cudaEvent_t done = nullptr;
  if (!spare_events_.empty()) {
    done = spare_events_.back();
    spare_events_.pop_back();
  } else {
    HN_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  }
  HN_CUDA_CHECK(cudaEventRecord(done, stream));
  const uint64_t seq = ++issued_;
  pending_.push_back(Pending{done, deadline, what, seq});
  cv_.notify_all();
  if (!opts_.sync) return;
  // sync: this op reports its own collective's failure; the watchdog bounds the wait.
  cv_.wait(lock, [&] { return !broken_.empty() || completed_ >= seq; });
  ThrowIfBroken();
}

void NCCLCommonWorld::Watch() {
  cudaSetDevice(opts_.device);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (pending_.empty() || !broken_.empty()) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      continue;
    }
    Pending& p = pending_.front();
    const cudaError_t q = cudaEventQuery(p.done);
    if (q == cudaSuccess) {
      spare_events_.push_back(p.done);
      completed_ = p.seq;
      pending_.pop_front();
      cv_.notify_all();
      continue;
    }
    std::string why;
    ErrorKind kind = ErrorKind::kIo;
    ncclResult_t state = ncclSuccess;
    if (q != cudaErrorNotReady) {
      (void)cudaGetLastError();
      kind = ErrorKind::kRuntime;
      why = MakeString(p.what, ": CUDA error ", cudaGetErrorName(q), " while it ran");
    } else if (ncclCommGetAsyncError(comm_, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress) {
      kind = state == ncclSystemError || state == ncclRemoteError ? ErrorKind::kIo : ErrorKind::kRuntime;
      why = MakeString(p.what, " failed: NCCL error ", static_cast<int>(state), " (", ncclGetErrorString(state),
                       ") (did a peer die?)");
    } else if (Clock::now() > p.deadline) {
      kind = ErrorKind::kTimeout;
      why = MakeString(p.what, " did not complete within ", Ms(opts_.timeout), " ms (a peer stalled or died)");
    }
    if (!why.empty()) {
      try {
        Break(kind, why);
      } catch (const Error&) {  // recorded in broken_: the next use of the world throws it
      }
      continue;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(2));
  }
}

void NCCLCommonWorld::Close() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (comm_) {
      // Let queued collectives finish (bounded), then a graceful finalize; anything left aborts.
      const auto deadline = Clock::now() + opts_.timeout;
      cv_.wait_until(lock, deadline, [&] { return pending_.empty() || !broken_.empty(); });
      bool graceful = comm_ && pending_.empty();
      try {
        if (graceful) {
          CUDADeviceGuard guard(opts_.device);
          const ncclResult_t f = ncclCommFinalize(comm_);
          graceful = f == ncclSuccess || f == ncclInProgress;
          if (graceful) AwaitProgress("closing", deadline);  // on failure Break aborts and clears comm_
        }
      } catch (const Error&) {
        graceful = false;
      }
      if (comm_) (graceful ? ncclCommDestroy(comm_) : ncclCommAbort(comm_));
      comm_ = nullptr;
      for (auto& p : pending_) cudaEventDestroy(p.done);
      pending_.clear();
      completed_ = issued_;
    }
    if (broken_.empty()) {
      broken_kind_ = ErrorKind::kIo;
      broken_ = Describe() + " was closed (DestroyCommonWorld)";
    }
    stop_ = true;
    cv_.notify_all();
  }
  if (watchdog_.joinable() && watchdog_.get_id() != std::this_thread::get_id()) watchdog_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto e : spare_events_) cudaEventDestroy(e);
  spare_events_.clear();
}

}  // namespace hetnet
