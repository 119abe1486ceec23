// Shared by the NCCL engine kernels of the communicator ops (operators/*_op_nccl.cc): input 0 is an
// NCCL common world (device/cuda/nccl_common_world.h), the tensors live on the world's GPU, which
// is the op's device, and collectives are only enqueued on the op's stream.
//
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include <nccl.h>

#include "device/cuda/cuda_context.h"
#include "device/cuda/nccl_common_world.h"
#include "operators/communicator_op.h"

namespace hetnet {

// ncclInProgress is how a non-blocking communicator says "queued"; anything else but success throws.
inline void NcclEnqueued(ncclResult_t r, const char* call) {
  if (r != ncclSuccess && r != ncclInProgress) ThrowNcclError(r, call);
}

// NCCL's type for what the GLOO kernels accept (float32, float16, float64, int32, int64), or
// Caffe2's "Unhandled type: <name>" naming the op.
ncclDataType_t NcclTypeOrUnhandled(const OperatorBase& op, DataType t);

class NcclCollectiveOp : public Operator<CUDAContext> {
 public:
  NcclCollectiveOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<CUDAContext>(def, ws), status_(*this, ws) {}

 protected:
  // Input 0 as an NCCL world whose GPU is this op's device.
  NCCLCommonWorld& World();
  // Inputs [1, 1 + n) updated in place, one numel and dtype (CheckInPlaceTensors), as writable pointers.
  std::vector<void*> InPlaceTensors(int n, int outputs);
  // ptrs[0] += ptrs[1] + ... (float32, float16, float64; other dtypes only with one tensor).
  void SumLocally(const std::vector<void*>& ptrs, int64_t numel, DataType t);
  // Copies `nbytes` at ptrs[0] + offset into every other pointer (+ offset).
  void CopyFirstToOthers(const std::vector<void*>& ptrs, size_t offset, size_t nbytes);

  CommunicatorStatus status_;
};

}  // namespace hetnet
