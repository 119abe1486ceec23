// NCCL for the single-process multi-GPU ops (NCCLAllreduce, ..., distributed-facts §2): a cache of
// communicators keyed by the device list (ncclCommInitAll), each with a non-blocking stream and an
// event per device, and the fenced, grouped launch every op goes through. Also the NCCL error
// mapping shared with the multi-process common world (device/cuda/nccl_common_world.*).
//
// Run on one GPU (H100, 2026-11-27): the [gpu] cases of tests/cpp/test_nccl_ops.cc pass; several
// GPUs never ran.
#pragma once

#include <nccl.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/types.h"
#include "device/cuda/cuda_context.h"

namespace hetnet {

// kIo for failures outside this process (ncclSystemError: sockets, shared memory; ncclRemoteError:
// a peer), kRuntime otherwise; the message carries ncclGetErrorString and ncclGetLastError.
[[noreturn]] void ThrowNcclError(ncclResult_t result, const std::string& what, ncclComm_t comm = nullptr);

#define HN_NCCL_CHECK(expr)                                            \
  do {                                                                 \
    ncclResult_t hn_nccl_r_ = (expr);                                  \
    if (hn_nccl_r_ != ncclSuccess) ::hetnet::ThrowNcclError(hn_nccl_r_, #expr); \
  } while (0)

// ncclFloat32 / ncclFloat16; any other dtype throws kUnsupported naming `who` (the op) and the dtype.
ncclDataType_t NcclDataType(DataType t, const std::string& who);

// An event for ordering streams without the host: recorded on a stream of one device (created
// there, and again when later recorded on another device), then waited for by any stream.
class FenceEvent {
 public:
  FenceEvent() = default;
  FenceEvent(const FenceEvent&) = delete;
  FenceEvent& operator=(const FenceEvent&) = delete;
  ~FenceEvent();  // never throws
  void Record(cudaStream_t stream, int device);
  void MakeWait(cudaStream_t waiter) const;  // waiter runs on after the recorded work

 private:
  int device_ = -1;
  cudaEvent_t event_ = nullptr;
};

// A stream a collective is ordered against, in both directions.
struct StreamFence {
  int device = 0;
  cudaStream_t stream = nullptr;
};

// One communicator per GPU of a device list, within this process.
class NCCLCommunicators {
 public:
  // The shared communicators over `devices` (distinct GPU ids, in list order = NCCL rank). Held
  // by the ops that use them; destroyed when the last holder lets go (as Caffe2 destroyed its
  // contexts when the last NCCL op went away), so GPU memory does not stay pinned by dead nets.
  static std::shared_ptr<NCCLCommunicators> Get(const std::vector<int>& devices);
  ~NCCLCommunicators();

  const std::vector<int>& devices() const { return devices_; }

  // launch(i, comm_i, stream_i) for every rank i inside one ncclGroupStart/End, with device i
  // current, ordered after the work queued so far on every fence stream, and every fence stream
  // ordered after the collective (events only: the host never waits for the GPU). Launches are
  // serialised per communicator (NCCL needs one order of collectives per communicator; two threads
  // interleaving their per-device launches would deadlock the GPUs) and, so that communicators
  // sharing GPUs launch in one order on all of them, across the process.
  using Launch = std::function<void(size_t rank, ncclComm_t comm, cudaStream_t stream)>;
  void Run(const std::vector<StreamFence>& fences, const Launch& launch);

 private:
  explicit NCCLCommunicators(std::vector<int> devices);
  void Release();  // tolerates members left null by a failed constructor

  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<std::unique_ptr<FenceEvent>> done_;  // per rank, on its stream
  std::vector<std::unique_ptr<FenceEvent>> in_;    // per fence stream
  std::mutex mu_;
};

// "cuda:0, cuda:1": for messages.
std::string DeviceListString(const std::vector<int>& devices);

}  // namespace hetnet
