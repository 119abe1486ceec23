// What the single-process NCCL operators (NCCLAllreduce, NCCLBroadcast, NCCLReduce,
// NCCLAllGather, NCCLReduceScatter) share, with Caffe2's conventions (distributed-facts §2):
// one input per GPU, each element's GPU taken from its tensor (not from the op), `root` an index
// into the input list, the collective ordered against the op's own stream.
//
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/operator.h"
#include "device/cuda/cuda_context.h"
#include "device/cuda/nccl_context.h"

namespace hetnet {

constexpr int kMaxNcclInputs = 16;  // Caffe2's C10_COMPILE_TIME_MAX_GPUS

// The `root` argument of def (default 0), for schema functions that see only the def.
int NcclRootArg(const caffe2::OperatorDef& def);

// Device inference (Caffe2's ncclOpDevInfer): input i and output i on GPU i. That is the list
// index, right when the blobs sit on GPUs 0..n-1; the kernels read each tensor where it is, so
// these devices only steer the copy pass. A single output (NCCLReduce) is on GPU `root`.
std::pair<std::vector<Device>, std::vector<Device>> NcclOpDevices(const caffe2::OperatorDef& def, Device);

class NCCLOpBase : public Operator<CUDAContext> {
 public:
  NCCLOpBase(const caffe2::OperatorDef& def, Workspace* ws);

 protected:
  struct Element {
    const Tensor* src = nullptr;
    Tensor* dst = nullptr;  // nullptr: this rank gets no output (NCCLReduce off the root)
    int device = 0;
  };

  // The inputs, checked: GPU tensors on distinct GPUs, one dtype (float32 or float16), and, with
  // same_numel, one element count. dst is left for the op to fill.
  std::vector<Element> Inputs(bool same_numel = true) const;
  // Output `out`, on GPU `device` (the input's, not the schema's guess), resized.
  Tensor* OutputOn(int out, int device, std::vector<int64_t> shape, DataType dtype);
  // The one-GPU case of the ops that are a no-op there: the output is the input.
  void CopyIfDistinct(const Tensor& src, Tensor* dst);
  // What the collective is ordered against: the op's stream (the executors order it after the
  // inputs' producers and their consumers after it) and, for each element's GPU, this thread's
  // stream there (the simple executor queues a GPU's ops on it and bridges GPUs only by copies).
  std::vector<StreamFence> Fences(const std::vector<int>& devices);
  // launch(rank, element, comm, stream) for every element, grouped and fenced (NCCLCommunicators::Run).
  using ElementLaunch = std::function<void(size_t, const Element&, ncclComm_t, cudaStream_t)>;
  void Collective(const std::vector<Element>& elements, const ElementLaunch& launch);
  // "NCCLAllreduce": who errors name.
  const std::string& who() const { return def_.type(); }
  // Refuses src and dst that share memory where the op cannot run in place.
  void CheckDistinct(const Element& e, int index) const;

  const int root_;

 private:
  std::shared_ptr<NCCLCommunicators> comms_;  // over the device list of the last run
  FenceEvent copy_in_, copy_out_;               // CopyIfDistinct off the op's GPU
};

}  // namespace hetnet
