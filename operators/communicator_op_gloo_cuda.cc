// Engine GLOO on a GPU device (distributed-facts §8 R9): the cross-host GPU path when NCCL is not
// used. Caffe2 registered CUDA GLOO kernels for CreateCommonWorld, CloneCommonWorld, Allreduce and
// Broadcast (with Gloo's CUDA algorithms); Debian's Gloo has none, so here every collective stages
// through pinned host memory and runs the CPU GLOO kernel of the same OperatorDef:
//   1. each input tensor is copied into a page-locked host tensor on the op's stream;
//   2. the op waits for its stream;
//   3. the CPU kernel (operators/*_op_gloo.cc) runs on the host tensors: its checks, rebinding,
//      cross-rank verification, errors and stats are those of the CPU op, not a copy of them;
//   4. each output is copied back to the GPU on the op's stream (queued, not waited for).
// The CPU kernel lives in a child workspace whose own blobs, named as the op's, are the staging
// tensors; its parent is the op's workspace, so input 0 is the real common world blob. The staging
// tensors ask for page-locked memory (Tensor::set_pinned_host) and keep it while sizes do not grow.
// CreateCommonWorld and CloneCommonWorld run their CPU kernel as is (their blobs are host objects
// the schema keeps on CPU). DestroyCommonWorld has no CUDA kernel of any engine, so placement runs
// it on CPU (CPU fallback); registering one here would take that fallback from engine NCCL too.
// Built only with CUDA and Gloo (CMakeLists.txt filters *_gloo_cuda.cc).
// Run on an H100 (2026-11-27): tests/cpp/test_gloo_cuda.cc [gpu][gloo] pass.
#include <memory>
#include <vector>

#include "core/workspace.h"
#include "device/cuda/cuda_context.h"
#include "operators/communicator_op.h"

namespace hetnet {

namespace {

// The OperatorDef of the CPU GLOO kernel that does the work of `def`.
caffe2::OperatorDef HostKernelDef(const caffe2::OperatorDef& def, bool keep_status_blob) {
  caffe2::OperatorDef d = def;
  d.clear_device_option();
  d.set_engine("GLOO");
  if (!keep_status_blob) {
    d.clear_arg();
    for (const auto& a : def.arg())
      if (a.name() != "status_blob") *d.add_arg() = a;
  }
  return d;
}

}  // namespace

// CreateCommonWorld / CloneCommonWorld: the CPU kernel on the op's own blobs.
class GlooHostOpOnCuda final : public Operator<CUDAContext> {
 public:
  GlooHostOpOnCuda(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), host_(CreateOperator(HostKernelDef(def, true), ws)) {}
  void RunOnDevice() override { host_->Run(); }

 private:
  std::unique_ptr<OperatorBase> host_;
};

// The collectives: staged through pinned host tensors (see the top of the file).
class GlooStagedOpOnCuda final : public Operator<CUDAContext>, public CollectiveStatsSource {
 public:
  GlooStagedOpOnCuda(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), status_(*this, ws), staging_ws_(ws) {
    // Staging blobs before the CPU kernel is created, so that it binds to them (input 0 is not
    // shadowed: the kernel reads the common world from the parent workspace).
    for (int i = 1; i < InputSize(); ++i) host_in_.push_back(StagingTensor(def.input(i)));
    for (int j = 0; j < OutputSize(); ++j) host_out_.push_back(StagingTensor(def.output(j)));
    host_ = CreateOperator(HostKernelDef(def, false), &staging_ws_);  // status_blob: ours, below
    stats_ = dynamic_cast<CollectiveStatsSource*>(host_.get());
  }
  ~GlooStagedOpOnCuda() override {
    if (copied_back_) cudaEventDestroy(copied_back_);
  }

  const CollectiveRunStats& last_collective_run() const override {
    return stats_ ? stats_->last_collective_run() : none_;
  }

  void RunOnDevice() override {
    status_.Run([&] {
      // The last run's copies back may still read the staging tensors (queued on another stream
      // when another executor thread ran it): wait for them on the host before anything writes or
      // reallocates a staging tensor. Normally long done: a whole net iteration ago.
      if (copied_back_) HN_CUDA_CHECK(cudaEventSynchronize(copied_back_));
      for (int i = 1; i < InputSize(); ++i) host_in_[i - 1]->CopyFrom(Input(i), &context_);
      // The fence: every executor queues this op on its stream behind the GPU work that produced
      // its inputs (the simple net runs a device's ops on one stream; the DAG executor makes this
      // stream wait for each GPU parent's event before Run). So once this stream is idle, the
      // inputs were final when copied and the host copies have landed.
      context_.FinishDeviceComputation();
      host_->Run();
      if (OutputSize() == 0) return;
      try {
        for (int j = 0; j < OutputSize(); ++j) Output(j)->CopyFrom(*host_out_[j], &context_);
      } catch (...) {
        MarkCopiesBack();  // those queued before the error still read the staging tensors
        throw;
      }
      MarkCopiesBack();
    });
  }

 private:
  void MarkCopiesBack() {
    if (!copied_back_) HN_CUDA_CHECK(cudaEventCreateWithFlags(&copied_back_, cudaEventDisableTiming));
    HN_CUDA_CHECK(cudaEventRecord(copied_back_, context_.stream()));
  }
  Tensor* StagingTensor(const std::string& name) {
    Tensor* t = staging_ws_.CreateBlob(name)->GetMutableTensor(Device::CPU());
    t->set_pinned_host(true);  // page-locked from its first allocation: the copies are true async DMAs
    return t;
  }

  CommunicatorStatus status_;
  Workspace staging_ws_;
  std::vector<Tensor*> host_in_, host_out_;  // staging tensors of inputs 1.. and of the outputs
  std::unique_ptr<OperatorBase> host_;       // the CPU GLOO kernel
  const CollectiveStatsSource* stats_ = nullptr;
  CollectiveRunStats none_;
  cudaEvent_t copied_back_ = nullptr;  // recorded after the last run's copies back
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(CreateCommonWorld, GLOO, GlooHostOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(CloneCommonWorld, GLOO, GlooHostOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Allreduce, GLOO, GlooStagedOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Broadcast, GLOO, GlooStagedOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Reduce, GLOO, GlooStagedOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Allgather, GLOO, GlooStagedOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(ReduceScatter, GLOO, GlooStagedOpOnCuda);
REGISTER_CUDA_OPERATOR_WITH_ENGINE(Barrier, GLOO, GlooStagedOpOnCuda);

}  // namespace hetnet
