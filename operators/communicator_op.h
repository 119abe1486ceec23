// Shared by the communicator ops (Caffe2's communicator_op.cc family: CreateCommonWorld, Allreduce,
// Broadcast, ...) and their engines (GLOO here, NCCL in operators/*nccl*): input 0 is the common
// world blob (a CommonWorldPtr, made by CreateCommonWorld), tensors are updated in place, and the
// default engine refuses to run (Caffe2's NoDefaultEngineOp).
#pragma once

#include <set>
#include <string>
#include <utility>

#include "core/collective_stats.h"  // CollectiveStatsSource, implemented by engine kernels
#include "core/operator.h"
#include "core/workspace.h"
#include "device/collectives/common_world.h"

namespace hetnet {

// Caffe2's default-engine kernel of every communicator op.
class NoDefaultEngineOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    HN_THROW(kInvalidArgument, "The operator ", type(),
             " does not have a default engine implementation. Please specify an engine explicitly for this operator.");
  }
};

// Schema in-place pairs (input first + i, output i) for i < 1024 (OpSchema takes explicit pairs).
inline std::set<std::pair<int, int>> ShiftedInplacePairs(int first) {
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < 1024; ++i) pairs.emplace(first + i, i);
  return pairs;
}

// The common world in input `i` (0 for every collective), checked.
inline const CommonWorldPtr& CommonWorldInput(const OperatorBase& op, int i = 0) {
  const Blob* b = op.InputBlob(i);
  HN_ENFORCE(b->IsType<CommonWorldPtr>() && b->Get<CommonWorldPtr>(), op.type(), ": input ", i, " ('",
             op.def().input(i), "') must hold a common world (made by CreateCommonWorld), but it holds ",
             b->TypeName());
  return b->Get<CommonWorldPtr>();
}

inline void SetCommonWorldOutput(OperatorBase* op, int i, CommonWorldPtr world) {
  op->OutputBlob(i)->Reset(std::make_shared<CommonWorldPtr>(std::move(world)));
}

// Inputs [first, first + count) are updated in place (output i is input first + i) and share one
// numel and dtype: Caffe2's initialize() checks, naming the op. The op has `outputs` outputs.
inline void CheckInPlaceTensors(const OperatorBase& op, int first, int count, int outputs) {
  HN_ENFORCE(op.OutputSize() == outputs, op.type(), " runs in place: it takes ", outputs, " output(s) for ",
             op.InputSize(), " input(s), but was given ", op.OutputSize());
  const Tensor& t0 = op.InputTensor(first);
  for (int i = 0; i < count; ++i) {
    HN_ENFORCE(op.IsInputOutputAlias(first + i, i), op.type(), " runs in place: output ", i,
               " ('", op.def().output(i), "') must be input ", first + i, " ('", op.def().input(first + i), "')");
    const Tensor& t = op.InputTensor(first + i);
    HN_ENFORCE(t.numel() == t0.numel(), op.type(), ": every tensor must have the same number of elements, but '",
               op.def().input(first + i), "' has ", t.numel(), " and '", op.def().input(first), "' has ", t0.numel());
    HN_ENFORCE(t.dtype() == t0.dtype(), op.type(), ": every tensor must have the same dtype, but '",
               op.def().input(first + i), "' is ", DataTypeName(t.dtype()), " and '", op.def().input(first), "' is ",
               DataTypeName(t0.dtype()));
  }
}

[[noreturn]] inline void ThrowUnhandledType(const OperatorBase& op, DataType t) {
  HN_THROW(kInvalidArgument, "Unhandled type: ", DataTypeName(t), " (", op.type(), ")");
}

// Arg `status_blob` (Caffe2's signalFailure): when set, a failed collective or rendezvous (kIo,
// kTimeout) first writes int32 [1] = 1 into that blob; the run fails either way with the error.
class CommunicatorStatus {
 public:
  CommunicatorStatus(const OperatorBase& op, Workspace* ws) {
    const std::string name = op.GetSingleArgument<std::string>("status_blob", "");
    if (!name.empty()) blob_ = ws->CreateBlob(name);  // at creation: runs never touch the blob map
  }
  template <class Fn>
  void Run(Fn&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      if (blob_ && (e.kind() == ErrorKind::kIo || e.kind() == ErrorKind::kTimeout)) {
        Tensor* t = blob_->GetMutableTensor(Device::CPU());
        t->Resize({1});
        *t->mutable_data<int32_t>() = 1;
      }
      throw;
    }
  }

 private:
  Blob* blob_ = nullptr;
};

// Arg `timeout_ms` of CreateCommonWorld (-1: Gloo's default of 30 s).
inline std::chrono::milliseconds CommonWorldTimeoutArgument(const OperatorBase& op) {
  const int64_t ms = op.GetSingleArgument<int64_t>("timeout_ms", -1);
  HN_ENFORCE(ms == -1 || ms > 0, op.type(), ": timeout_ms must be positive or -1 (30 s), got ", ms);
  return std::chrono::milliseconds(ms == -1 ? 30000 : ms);
}

}  // namespace hetnet
