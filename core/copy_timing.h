// How long an inserted copy took, next to OperatorBase::bytes_copied_last_run: the copy operators
// (operators/copy_op.h) implement it, and Predictor::Run reports it per copy (serving's
// hetnet_copy_duration_us). An interface of its own, found with dynamic_cast, so that operators
// which copy nothing carry nothing.
#pragma once

namespace hetnet {

class TimedCopy {
 public:
  virtual ~TimedCopy() = default;
  // Seconds the last run's copy took: host time for CPU copies, the stream's time between two
  // events for GPU copies (-1 while that work has not finished, or before any run).
  virtual double copy_seconds_last_run() const = 0;
};

}  // namespace hetnet
