// A group of ranks that run collectives together (Caffe2's "common world"): what a
// CreateCommonWorld op writes into its output blob and every collective op reads from input 0.
// Engines: Gloo (device/collectives/gloo_common_world.*, CPU tensors, TCP pairs) and NCCL
// (device/cuda/nccl_common_world.*, GPU tensors). A blob holding one holds a CommonWorldPtr.
//
// Collectives on one common world must run in the same order on every rank; the executors keep
// ops that share input 0 in net order (core/dag_graph.cc).
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace hetnet {

class CommonWorld {
 public:
  virtual ~CommonWorld() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* engine() const = 0;  // "GLOO", "NCCL"
  // Deadline of every collective and rendezvous on this world.
  virtual std::chrono::milliseconds timeout() const = 0;
  // Closes connections (DestroyCommonWorld); later collectives throw kIo.
  virtual void Close() = 0;
  // "GLOO common world 'allreduce_0_cw' rank 1 of 4 over tcp (eth0)": for errors and reports.
  virtual std::string Describe() const = 0;
};

using CommonWorldPtr = std::shared_ptr<CommonWorld>;

}  // namespace hetnet
