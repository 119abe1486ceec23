// The NCCL engine's common world (beyond Caffe2, distributed-facts §8 item 8): one GPU per process
// rank, a communicator set up from rank 0's ncclUniqueId published through a StoreHandler, then
// ncclCommInitRankConfig in non-blocking mode so that no step can wait past the world's timeout:
//
//  - setup: the store waits are bounded by the timeout; NCCL's own setup is polled
//    (ncclCommGetAsyncError) and the communicator aborted past the deadline (kTimeout);
//  - two ranks on one GPU are refused (kInvalidArgument) before NCCL sees them, from the GPU UUIDs
//    and host names every rank publishes first (NCCL's own refusal is "Duplicate GPU detected");
//  - collectives are only enqueued on the caller's stream (no host synchronization). A watchdog
//    thread, started with the world, follows each one with an event: when it has not completed by
//    its deadline, or NCCL reports an asynchronous error (a peer died), the communicator is aborted
//    (which releases the stream) and the world is broken: every later use throws kTimeout or kIo.
//    With `sync` the calling op also waits (bounded) for its collective and throws itself.
//
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/collectives/common_world.h"
#include "device/collectives/store_handler.h"
#include "device/cuda/nccl_context.h"

namespace hetnet {

struct NcclWorldOptions {
  std::string name;  // the CreateCommonWorld op's name: store key prefix, and in messages
  int rank = 0;
  int size = 0;
  int device = 0;  // this rank's GPU
  std::chrono::milliseconds timeout{30000};
  bool sync = false;  // collectives wait for completion in the calling op (bounded by the timeout)
};

class NCCLCommonWorld final : public CommonWorld {
 public:
  static std::shared_ptr<NCCLCommonWorld> Create(const NcclWorldOptions& opts, const StoreHandlerPtr& store);
  ~NCCLCommonWorld() override;

  int rank() const override { return opts_.rank; }
  int size() const override { return opts_.size; }
  const char* engine() const override { return "NCCL"; }
  std::chrono::milliseconds timeout() const override { return opts_.timeout; }
  void Close() override;
  std::string Describe() const override;
  int device() const { return opts_.device; }

  // Enqueues the NCCL calls of `launch` (given the communicator) on `stream`, a stream of device():
  // one collective at a time per world, in the callers' order. `what` names it in errors.
  void Run(const std::string& what, cudaStream_t stream, const std::function<void(ncclComm_t)>& launch);

 private:
  explicit NCCLCommonWorld(const NcclWorldOptions& opts) : opts_(opts) {}
  void Rendezvous(const StoreHandlerPtr& store);
  // Polls until NCCL's host-side work on comm_ is done; past `deadline` aborts (kTimeout).
  void AwaitProgress(const std::string& what, std::chrono::steady_clock::time_point deadline);
  [[noreturn]] void Break(ErrorKind kind, const std::string& why);  // under mu_
  void ThrowIfBroken() const;                                      // under mu_
  void Watch();                                                    // the watchdog thread
  void StopWatchdog();

  struct Pending {
    cudaEvent_t done = nullptr;
    std::chrono::steady_clock::time_point deadline;
    std::string what;
    uint64_t seq = 0;
  };

  const NcclWorldOptions opts_;
  ncclComm_t comm_ = nullptr;
  mutable std::mutex mu_;  // comm_, the pending queue, the broken state
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> spare_events_;
  uint64_t issued_ = 0, completed_ = 0;  // collectives enqueued / seen complete (or abandoned)
  ErrorKind broken_kind_ = ErrorKind::kIo;
  std::string broken_;  // empty while usable
  bool stop_ = false;
  std::thread watchdog_;
};

}  // namespace hetnet
