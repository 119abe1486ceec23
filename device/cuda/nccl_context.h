// NCCL for the single-process multi-GPU ops (NCCLAllreduce, ..., distributed-facts §2): a cache of
// communicators keyed by the device list (ncclCommInitAll), each with a non-blocking stream and an
// event per device, and the fenced, grouped launch every op goes through. Also the NCCL error
// mapping shared with the multi-process common world (device/cuda/nccl_common_world.*).
//
// UNVERIFIED: written and compiled on a machine without a GPU; the [gpu] cases of
// tests/cpp/test_nccl_ops.cc are what exercises it.
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
  // current, ordered after the work queued so far on `op_stream` (of GPU `op_device`), and
  // `op_stream` ordered after the collective. The host never waits for the GPU. Launches on one
  // communicator are serialised: NCCL requires one order of collectives per communicator, and two
  // threads interleaving their per-device launches would deadlock the GPUs.
  using Launch = std::function<void(size_t rank, ncclComm_t comm, cudaStream_t stream)>;
  void Run(int op_device, cudaStream_t op_stream, const Launch& launch);

 private:
  explicit NCCLCommunicators(std::vector<int> devices);
  cudaEvent_t MasterEvent(int device);  // under mu_
  void Release();                        // tolerates members left null by a failed constructor

  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> done_;                             // per rank, on its stream
  std::vector<std::pair<int, cudaEvent_t>> master_events_;    // per op device
  std::mutex mu_;
};

// "cuda:0, cuda:1": for messages.
std::string DeviceListString(const std::vector<int>& devices);

}  // namespace hetnet
