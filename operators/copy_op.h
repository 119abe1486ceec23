// Copy (same device, or between GPUs), CopyCPUToGPU and CopyGPUToCPU: the operators the
// cross-device copy pass inserts. They report the bytes they moved for the placement report.
// They report the bytes they moved and how long that took (core/copy_timing.h).
#pragma once

#include <chrono>

#include "core/copy_timing.h"
#include "core/operator.h"

namespace hetnet {

template <class Context>
class CopyOpBase : public Operator<Context>, public TimedCopy {
 public:
  using Operator<Context>::Operator;
  int64_t bytes_copied_last_run() const override { return last_bytes_; }

 protected:
  int64_t last_bytes_ = -1;
};

// CPU: a deep copy (the CPU kernel of all three types, so a net under soft placement still runs).
class CPUCopyOp final : public CopyOpBase<CPUContext> {
 public:
  using CopyOpBase<CPUContext>::CopyOpBase;
  void RunOnDevice() override {
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor& X = Input(0);
    Tensor* Y = Output(0);
    if (&X != Y) Y->CopyFrom(X, &context_);
    last_bytes_ = static_cast<int64_t>(X.nbytes());
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double copy_seconds_last_run() const override { return seconds_; }

 private:
  double seconds_ = -1;
};

}  // namespace hetnet
